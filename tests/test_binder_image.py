"""Binder's image builder, repo2docker, reads this repository as the README and the
instructors' page say: Python from ``runtime.txt``, packages from ``requirements.txt``,
then ``postBuild``.

``jupyter-repo2docker --no-build --debug`` prints the Dockerfile it would build without
Docker or a network. The same image serves Binder and a class's JupyterHub
(chapters/for_instructors/instructors.md). Controls on a copy of the three files show that the checks
follow the files.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REPO2DOCKER = Path(sys.executable).parent / "jupyter-repo2docker"
BINDER_FILES = ["runtime.txt", "requirements.txt", "postBuild", "pyproject.toml"]


def _dockerfile(repo: Path) -> str:
    result = subprocess.run(
        [str(REPO2DOCKER), "--no-build", "--debug", str(repo)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "FROM " in result.stdout, result.stdout[:2000]
    return result.stdout


def _python_version(dockerfile: str) -> str | None:
    match = re.search(r"environment-2epy-2d(\d+)-2e(\d+)-2d", dockerfile)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def _runtime_python(repo: Path) -> str:
    text = (repo / "runtime.txt").read_text(encoding="utf-8").strip()
    match = re.fullmatch(r"python-(\d+\.\d+)", text)
    assert match, f"runtime.txt should read python-X.Y, not {text!r}"
    return match.group(1)


@pytest.fixture(scope="module")
def dockerfile() -> str:
    return _dockerfile(REPO)


def test_python_version_from_runtime_txt(dockerfile):
    assert _python_version(dockerfile) == _runtime_python(REPO)


def test_installs_requirements_txt(dockerfile):
    assert (
        "COPY --chown=0:0 src/requirements.txt ${REPO_DIR}/requirements.txt"
        in dockerfile
    )
    assert re.search(
        r'^RUN \S+/bin/pip install --no-cache-dir -r "requirements.txt"$',
        dockerfile,
        re.M,
    ), dockerfile


def test_runs_postbuild_after_the_requirements(dockerfile):
    lines = dockerfile.splitlines()
    assert "RUN ./postBuild" in lines
    requirements = next(
        i for i, line in enumerate(lines) if '-r "requirements.txt"' in line
    )
    assert lines.index("RUN ./postBuild") > requirements


def test_the_checks_follow_the_files(tmp_path):
    """Another Python in runtime.txt changes the image; without postBuild none is
    run."""
    for name in BINDER_FILES:
        shutil.copy2(REPO / name, tmp_path / name)
    (tmp_path / "runtime.txt").write_text("python-3.12\n", encoding="utf-8")
    (tmp_path / "postBuild").unlink()
    other = _dockerfile(tmp_path)
    assert _python_version(other) == "3.12"
    assert "RUN ./postBuild" not in other.splitlines()
    assert '-r "requirements.txt"' in other


# --------------------------------------------------------------- the instructors' page
INSTRUCTORS = REPO / "chapters" / "for_instructors" / "instructors.md"


def _code_blocks(language: str) -> list[str]:
    text = INSTRUCTORS.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.M | re.S)


def test_instructors_page_is_in_the_book():
    import yaml

    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert "chapters/for_instructors/instructors" in files


def test_the_class_image_command_adds_nbgitpuller_after_postbuild():
    """The page's repo2docker command, in no-build mode: the same image as Binder's,
    plus nbgitpuller installed at the very end."""
    [command] = [
        block for block in _code_blocks("bash") if "jupyter-repo2docker" in block
    ]
    [appendix] = re.findall(r"--appendix '([^']+)'", command)
    assert "nbgitpuller" in appendix
    result = subprocess.run(
        [str(REPO2DOCKER), "--no-build", "--debug", "--appendix", appendix, str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines.index(appendix) > lines.index("RUN ./postBuild")
    assert _python_version(result.stdout) == _runtime_python(REPO)


def test_nbgitpuller_links_open_existing_notebooks():
    """The example link and the link-printing snippet point at this repository's
    notebooks."""
    from urllib.parse import parse_qs, urlparse

    import yaml

    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    repo_url = config["repository"]["url"].rstrip("/")
    repo_name = urlparse(repo_url).path.rstrip("/").rsplit("/", 1)[-1]
    [snippet] = _code_blocks("python")
    printed = subprocess.run(
        [sys.executable, "-c", snippet],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    example = [
        line
        for block in _code_blocks("text")
        for line in block.splitlines()
        if "git-pull?repo=https" in line
    ]
    links = [line.split(": ", 1)[1] for line in printed] + example
    notebooks = sorted(
        p.relative_to(REPO).as_posix() for p in (REPO / "chapters").glob("*.ipynb")
    )
    assert len(printed) == len(notebooks) and example
    opened = []
    for link in links:
        parsed = urlparse(link)
        assert parsed.path.endswith("/hub/user-redirect/git-pull"), link
        query = parse_qs(parsed.query)
        assert query["repo"] == [repo_url] and query["branch"] == [
            config["repository"]["branch"]
        ]
        prefix = f"lab/tree/{repo_name}/"
        [urlpath] = query["urlpath"]
        assert urlpath.startswith(prefix), link
        assert (REPO / urlpath[len(prefix) :]).is_file(), link
        opened.append(urlpath[len(prefix) :])
    assert sorted(opened[: len(printed)]) == notebooks
