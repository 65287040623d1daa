// The self-check questions of one chapter, once jupyterquiz has drawn them in the element
// `quiz` (chapters/book_support/exercises/quiz.py inserts this file into the cell's output, where it
// runs after jupyterquiz's own script, with `quiz`, `quizKey` and jupyterquiz's `jaxify`
// in scope; MathJax is reached as window.MathJax). What it adds:
//
// * keyboard and screen readers: each option of a multiple-choice question is a <button>
//   (a Tab stop; Enter or Space picks it; aria-pressed says which was picked), the options
//   form a group named by the question, a number box is labelled by its prompt and
//   described by its question, and the feedback is a live region (role="status");
// * numbers as people write them: 4,194,304, 4 194 304, 0,7311, 73.11 %, 1/4, -2 or
//   −2 (see readNumber); a text that is no number gets a hint about the format, not the
//   hint about the subject; the box asks phones for a numeric keyboard
//   (inputmode="decimal") and has a Check button, since that keyboard may have no Enter
//   key; feedback disappears as soon as the answer is changed;
// * a score ("2 of 5 answered correctly") under the questions, and memory: every checked
//   answer is kept in this browser (localStorage, key STORE + quizKey) with the page it
//   belongs to, and shown again when the page is opened again; "Forget my answers" clears
//   them. The site's script (_ext/static/reader.js) reads the same records to tick the
//   chapters whose questions are all answered correctly in the list of chapters; it is
//   told of every change by the event "attn-quiz-progress" on the document.
var STORE = "attention-executable:quiz:";
var wrappers = Array.prototype.slice.call(quiz.querySelectorAll(".Quiz"));

function load() {
  try {
    return JSON.parse(window.localStorage.getItem(STORE + quizKey)) || {answers: {}};
  } catch (error) {
    return {answers: {}};  // storage blocked or unreadable: start afresh
  }
}
var record = load();
record.answers = record.answers || {};

function save() {
  record.page = window.location.pathname;
  record.total = wrappers.length;
  record.correct = Object.keys(record.answers).filter(function (i) {
    return record.answers[i].correct;
  }).length;
  record.done = record.correct === record.total;
  try {
    window.localStorage.setItem(STORE + quizKey, JSON.stringify(record));
  } catch (error) { /* storage blocked: the answers last as long as the page */ }
  showScore();
  document.dispatchEvent(new CustomEvent("attn-quiz-progress", {detail: record}));
}

// ---------------------------------------------------------------- reading a number
// The values a text may mean, most likely first; null if it is no number.
function readPlain(s) {
  if (/^[+-]?\d+$/.test(s)) return [Number(s)];
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s)) {
    var values = [Number(s)];
    if (/^[+-]?\d{1,3}\.\d{3}$/.test(s)) values.push(Number(s.replace(".", "")));
    return values;
  }
  if (/^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) {  // 4,194,304 or 2,048.5
    var grouped = [Number(s.replace(/,/g, ""))];
    if (/^[+-]?\d{1,3},\d{3}$/.test(s)) grouped.push(Number(s.replace(",", ".")));
    return grouped;
  }
  if (/^[+-]?\d{1,3}(\.\d{3})+(,\d+)?$/.test(s)) {  // 4.194.304 or 1.234,5
    return [Number(s.replace(/\./g, "").replace(",", "."))];
  }
  if (/^[+-]?\d*,\d+$/.test(s)) return [Number(s.replace(",", "."))];  // 0,7311
  return null;
}

function readNumber(text) {
  var s = String(text).trim()
    .replace(/[\u2212\u2012\u2013]/g, "-")             // minus signs and dashes
    .replace(/[\s\u00a0\u202f_']/g, "");               // spaces between digit groups
  if (!s) return null;
  var percent = /%$/.test(s);
  if (percent) s = s.slice(0, -1);
  var values;
  if (s.indexOf("/") >= 0) {
    var parts = s.split("/");
    var top = parts.length === 2 && readPlain(parts[0]);
    var bottom = parts.length === 2 && readPlain(parts[1]);
    if (!top || !bottom || bottom[0] === 0) return null;
    values = [top[0] / bottom[0]];
  } else {
    values = readPlain(s);
  }
  if (!values || values.some(function (v) { return !isFinite(v); })) return null;
  if (!percent) return values;
  // "73.11 %" is 0.7311, unless the question asks for a percentage itself
  return values.map(function (v) { return v / 100; }).concat(values);
}

// ---------------------------------------------------------------- feedback
function feedbackOf(wrap) { return wrap.querySelector(".Feedback"); }

// TeX in the feedback, typeset once MathJax has loaded (at once if it has)
function typeset(element) {
  var mathJax = window.MathJax;
  if (!mathJax || !mathJax.startup || !mathJax.startup.promise) return;
  mathJax.startup.promise.then(function () {
    if (mathJax.typesetPromise) return mathJax.typesetPromise([element]);
  });
}

function showFeedback(wrap, html, correct) {
  var fb = feedbackOf(wrap);
  fb.innerHTML = jaxify(html);
  fb.className = "Feedback " + (correct ? "correct" : "incorrect");
  fb.style.display = "block";
  typeset(fb);
}

function clearFeedback(wrap) {
  var fb = feedbackOf(wrap);
  fb.innerHTML = "";
  fb.className = "Feedback";
  fb.style.display = "none";
}

function inRange(value, answer) {
  return value >= answer.range[0] && value < answer.range[1];
}

// The answer a number gets: its first reading in the right interval, else in a slip's,
// else the hint.
function judge(values, answers) {
  var ranges = answers.filter(function (a) { return a.type === "range"; });
  var fallback = answers.filter(function (a) { return a.type === "default"; })[0];
  var right = ranges.filter(function (a) { return a.correct; });
  var slips = ranges.filter(function (a) { return !a.correct; });
  for (var k = 0; k < 2; k += 1) {
    var pool = k === 0 ? right : slips;
    for (var i = 0; i < values.length; i += 1) {
      for (var j = 0; j < pool.length; j += 1) {
        if (inRange(values[i], pool[j])) return pool[j];
      }
    }
  }
  return fallback || {correct: false, feedback: "Not yet."};
}

var FORMAT_HINT = "Not yet: I could not read that as a number. Write it with digits, " +
  "for example 0.7311, 4,194,304, 0,7311, 73.11% or 1/4.";

// ---------------------------------------------------------------- number boxes
function setUpNumber(wrap, index) {
  var old = wrap.querySelector("input.Input-text");
  // a copy without jupyterquiz's handlers, which refused commas, spaces and "%",
  // blocked pasting and emptied the box whenever it was focused
  var box = old.cloneNode(false);
  old.replaceWith(box);
  box.setAttribute("inputmode", "decimal");
  box.setAttribute("autocomplete", "off");
  box.setAttribute("enterkeyhint", "done");
  var answers = JSON.parse(box.dataset.answers);
  var check = document.createElement("button");
  check.type = "button";
  check.className = "QuizCheck";
  check.textContent = "Check";
  box.after(check);

  function run(remember) {
    var text = box.value;
    if (!text.trim()) { clearFeedback(wrap); return; }
    var values = readNumber(text);
    var correct = false;
    if (values === null) {
      showFeedback(wrap, FORMAT_HINT, false);
    } else {
      var answer = judge(values, answers);
      correct = !!answer.correct;
      showFeedback(wrap, answer.feedback, correct);
    }
    box.classList.toggle("correctButton", correct);
    box.classList.toggle("incorrectButton", !correct);
    if (remember) {
      record.answers[index] = {value: text, correct: correct};
      save();
    }
    return correct;
  }
  box.addEventListener("keydown", function (event) {
    if (event.key === "Enter") { event.preventDefault(); run(true); }
  });
  check.addEventListener("click", function () { run(true); });
  box.addEventListener("input", function () {
    clearFeedback(wrap);
    box.classList.remove("correctButton", "incorrectButton");
    if (record.answers[index]) { delete record.answers[index]; save(); }
  });
  return {
    restore: function (saved) { box.value = saved.value; return run(false); },
    reset: function () {
      box.value = "";
      box.classList.remove("correctButton", "incorrectButton");
      clearFeedback(wrap);
    },
  };
}

// ---------------------------------------------------------------- options
function withoutMaths(text) {
  return text
    .replace(/\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$|\$.*?\$/g, "")
    .replace(/[\s.,;:]/g, "");
}

function spokenText(text) {
  return text.replace(/\\[()\[\]]|\$\$?/g, "").replace(/\s+/g, " ").trim();
}

function setUpOptions(wrap, index, question) {
  var options = Array.prototype.slice.call(wrap.querySelectorAll("label.MCButton"));
  if (question) {
    options[0].parentElement.setAttribute("role", "group");
    options[0].parentElement.setAttribute("aria-labelledby", question.id);
  }
  options.forEach(function (option) {
    var radio = option.querySelector("input[type=radio]");
    if (radio) radio.remove();
    var button = document.createElement("button");
    button.type = "button";
    button.className = "MCOption";
    button.setAttribute("aria-pressed", "false");
    while (option.firstChild) button.appendChild(option.firstChild);
    option.appendChild(button);
    // the option's text as drawn, before MathJax typesets it: what an answer is kept as
    option.dataset.text = button.textContent.trim();
    // an option that is only mathematics has no accessible name once typeset: its
    // text as drawn, without the TeX delimiters, names it
    if (!withoutMaths(option.dataset.text)) {
      button.setAttribute("aria-label", spokenText(option.dataset.text));
    }
    // a click on the label's padding is checked once, not again through its button
    option.addEventListener("click", function (event) {
      if (event.target === option) event.preventDefault();
    }, true);
    option.addEventListener("click", function () {
      options.forEach(function (other) {
        other.firstChild.setAttribute("aria-pressed", String(other === option));
      });
      typeset(feedbackOf(wrap));  // jupyterquiz has just written it
      if (!restoring) {
        record.answers[index] = {
          value: option.dataset.text,
          correct: option.dataset.correct === "true",
        };
        save();
      }
    });
  });
  var restoring = false;
  return {
    restore: function (saved) {
      var chosen = options.filter(function (option) {
        return option.dataset.text === saved.value;
      })[0];
      if (!chosen) return null;
      restoring = true;
      chosen.firstChild.click();
      restoring = false;
      return chosen.dataset.correct === "true";
    },
    reset: function () {
      options.forEach(function (option) {
        option.className = "MCButton";
        option.firstChild.setAttribute("aria-pressed", "false");
      });
      clearFeedback(wrap);
    },
  };
}

// ---------------------------------------------------------------- score and reset
var score = document.createElement("div");
score.className = "QuizScore";
var scoreText = document.createElement("p");
scoreText.setAttribute("role", "status");
var forget = document.createElement("button");
forget.type = "button";
forget.className = "QuizForget";
forget.textContent = "Forget my answers";
score.append(scoreText, forget);
quiz.appendChild(score);

function showScore() {
  var n = wrappers.length;
  var right = Object.keys(record.answers).filter(function (i) {
    return record.answers[i].correct;
  }).length;
  scoreText.textContent = right === n
    ? "Score: all " + n + " answered correctly. This chapter is ticked in the list of " +
      "chapters; your answers are kept in this browser."
    : "Score: " + right + " of " + n + " answered correctly (kept in this browser).";
  forget.hidden = Object.keys(record.answers).length === 0;
}

var questions = wrappers.map(function (wrap, index) {
  var question = wrap.querySelector("[id^=quizQn]");
  var feedback = feedbackOf(wrap);
  if (feedback) feedback.setAttribute("role", "status");
  var box = wrap.querySelector("input.Input-text");
  if (box) {
    var prompt = wrap.querySelector("label.InpLabel");
    if (prompt) prompt.htmlFor = box.id;
    if (question) box.setAttribute("aria-describedby", question.id);
    return setUpNumber(wrap, index);
  }
  return setUpOptions(wrap, index, question);
});

forget.addEventListener("click", function () {
  record.answers = {};
  questions.forEach(function (q) { q.reset(); });
  save();
  scoreText.focus();
});
scoreText.tabIndex = -1;

// Answers kept for other questions (the chapter has changed since) are forgotten;
// the kept ones are checked again, against the questions as they are now.
// (The fingerprint: each question's text and its options' texts in sorted order, since
// the options are shuffled at every visit.)
var fingerprint = String(wrappers.length) + ":" + wrappers.reduce(function (h, wrap) {
  var question = wrap.querySelector("[id^=quizQn]");
  var options = Array.prototype.map.call(wrap.querySelectorAll("label.MCButton"),
    function (option) { return option.textContent.trim(); }).sort();
  var text = (question ? question.textContent : "") + "|" + options.join("|");
  for (var i = 0; i < text.length; i += 1) h = (h * 31 + text.charCodeAt(i)) >>> 0;
  return h;
}, 7);
if (record.fingerprint !== fingerprint) record.answers = {};
record.fingerprint = fingerprint;
var kept = Object.keys(record.answers).length;
questions.forEach(function (q, index) {
  var saved = record.answers[index];
  if (!saved) return;
  var correct = q.restore(saved);
  if (correct === null) delete record.answers[index];
  else saved.correct = correct;
});
if (kept) save(); else showScore();
