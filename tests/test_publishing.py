"""The GitHub Actions workflow that tests and publishes the book
   (.github/workflows/book.yml).

GitHub Actions cannot run here, so its YAML is checked offline against the workflow
schema that check-jsonschema ships (``--builtin-schema vendor.github-workflows``, the
SchemaStore schema of GitHub's workflow syntax), and its content against what the README
promises: on every pull request and every push to main it runs ``make test``; on main it
builds the PDF with ``make pdf`` and publishes ``_build/html`` with the PDF to GitHub
Pages; every night it runs ``make test-all``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "book.yml"
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"


def _lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            str(CHECK_JSONSCHEMA),
            "--builtin-schema",
            "vendor.github-workflows",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def _uses(job: dict, action: str) -> list[dict]:
    return [s for s in _steps(job) if s.get("uses", "").split("@")[0] == action]


def test_every_workflow_passes_the_schema_linter():
    workflows = sorted((REPO / ".github" / "workflows").glob("*.y*ml"))
    assert WORKFLOW in workflows
    for path in workflows:
        result = _lint(path)
        assert result.returncode == 0, f"{path.name}:\n{result.stdout}{result.stderr}"


def test_the_linter_rejects_a_broken_workflow(tmp_path):
    """The check can fail: a misspelt key in a step (``wtih``) is reported."""
    broken = WORKFLOW.read_text(encoding="utf-8").replace(
        "        with:\n", "        wtih:\n", 1
    )
    assert broken != WORKFLOW.read_text(encoding="utf-8")
    (tmp_path / "broken.yml").write_text(broken, encoding="utf-8")
    result = _lint(tmp_path / "broken.yml")
    assert result.returncode != 0
    assert "wtih" in result.stdout + result.stderr


def test_runs_on_every_push_to_main():
    # PyYAML reads the bare key `on` as the boolean True (YAML 1.1)
    triggers = _workflow().get("on", _workflow().get(True))
    assert "main" in triggers["push"]["branches"]


def test_make_test_on_pull_requests_and_make_test_all_nightly():
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))
    assert "pull_request" in triggers
    assert triggers["schedule"] and all("cron" in s for s in triggers["schedule"])
    jobs = workflow["jobs"]
    tested = jobs["test-and-build"]
    assert "schedule" in tested["if"] and "!=" in tested["if"]
    nightly = [
        job
        for job in jobs.values()
        if "make test-all" in [s.get("run", "").strip() for s in _steps(job)]
    ]
    assert len(nightly) == 1 and "schedule" in nightly[0]["if"]
    # the PDF and the publication only for main, not for a pull request
    for step in _steps(tested):
        if step.get("run", "").strip() == "make pdf" or step.get("uses"):
            if "checkout" not in step.get("uses", ""):
                assert "pull_request" in step.get("if", ""), step
    assert "pull_request" in jobs["deploy"]["if"]


def test_tests_then_builds_pdf_then_uploads_the_site():
    job = _workflow()["jobs"]["test-and-build"]
    runs = [s.get("run", "").strip() for s in _steps(job)]
    assert "make test" in runs, "the workflow must run the README's `make test`"
    assert "make pdf" in runs
    index = {name: i for i, name in enumerate(runs)}
    assert index["make test"] < index["make pdf"]
    [checkout] = _uses(job, "actions/checkout")
    assert _steps(job).index(checkout) < index["make test"]
    [upload] = _uses(job, "actions/upload-pages-artifact")
    assert upload["with"]["path"] == "_build/html"
    assert _steps(job).index(upload) > index["make pdf"]
    copy_pdf = [r for r in runs if r.startswith("cp ") and r.endswith("_build/html/")]
    assert copy_pdf and ".pdf" in copy_pdf[0], "the PDF is published beside the website"


def test_deploys_to_pages_after_the_build():
    jobs = _workflow()["jobs"]
    deploy = jobs["deploy"]
    assert deploy["needs"] == "test-and-build"
    assert deploy["environment"]["name"] == "github-pages"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert _uses(deploy, "actions/deploy-pages")
    # the job that runs the repository's code cannot write to Pages
    assert "permissions" not in jobs["test-and-build"]
    assert _workflow()["permissions"] == {"contents": "read"}


@pytest.mark.parametrize("needle", ["book.yml", "GitHub Pages", "make test"])
def test_readme_documents_publishing(needle):
    assert needle in (REPO / "README.md").read_text(encoding="utf-8")
