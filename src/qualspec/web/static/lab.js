// The Lab page: posts the form as JSON to /api/generate-answer/stream and shows each
// iteration as its server-sent event arrives (with its changes from the one before and the
// score trend); Stop aborts the stream, which stops the Lab on the server (no further
// model call). Model text is only ever set as textContent; no inline style (strict CSP).
"use strict";
(function () {
  const form = document.getElementById("lab-form");
  const list = document.getElementById("iterations");
  const status = document.getElementById("lab-status");
  const result = document.getElementById("lab-result");
  const progress = document.getElementById("lab-progress");
  const button = document.getElementById("lab-submit");
  const stop = document.getElementById("lab-stop");
  const SVG = "http://www.w3.org/2000/svg";
  // the trend's geometry, as the server draws it (web/_lab_view.py)
  const BAR_W = 34, GAP = 10, PLOT_H = 80, TOP = 14, LABELS = 16;
  let current = null;  // {controller, stopped, runId, iterations, threshold}

  function say(text, state) {
    // state: running, done, stopped, error (an error stands out: it is not muted text)
    status.textContent = text;
    status.dataset.state = state;
    status.className = state === "error" ? "note-box error" : state === "stopped" ? "note-box stopped" : "muted";
    status.setAttribute("role", state === "error" ? "alert" : "status");
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function card(it) {
    const art = el("article", "iteration");
    art.dataset.iteration = String(it.iteration_number);
    const h = el("h3", null, "Iteration " + it.iteration_number + " ");
    const e = it.evaluation;
    if (e) {
      h.appendChild(el("span", "badge " + (e.meets_criteria ? "pass" : "fail"), "score " + e.score.toFixed(2)));
    } else if (it.error) {
      h.appendChild(el("span", "badge error", "error"));
    } else {
      h.appendChild(el("span", "badge unscored", "unscored"));
    }
    art.appendChild(h);
    art.appendChild(el("pre", "answer", it.answer));
    if (e) {
      const p = el("p", "reasoning");
      p.appendChild(el("strong", null, "Reasoning: "));
      p.appendChild(document.createTextNode(e.evaluation_reasoning));
      art.appendChild(p);
      if (e.improvement_suggestions.length) {
        const ul = el("ul", "suggestions");
        for (const s of e.improvement_suggestions) ul.appendChild(el("li", null, s));
        art.appendChild(ul);
      }
    } else if (it.error) {
      const p = el("p", "error lab-error", it.error);
      p.setAttribute("role", "alert");
      art.appendChild(p);
    } else {
      art.appendChild(el("p", "unscored", it.unscored_reason));
    }
    if (it.changes) art.appendChild(changes(it.changes));
    return art;
  }

  function changes(c) {
    const box = el("details", "changes");
    const summary = el("summary");
    if (c.same) {
      summary.textContent = "Same answer as iteration " + c.from;
    } else {
      summary.appendChild(document.createTextNode("Changes from iteration " + c.from + ": "));
      summary.appendChild(el("span", "added", "+" + c.added));
      summary.appendChild(document.createTextNode(" "));
      summary.appendChild(el("span", "removed", "\u2212" + c.removed));
      summary.appendChild(document.createTextNode(" words"));
    }
    box.appendChild(summary);
    const pre = el("pre", "diff");
    for (const [op, text] of c.pieces) {
      pre.appendChild(op === "+" ? el("ins", null, text) : op === "-" ? el("del", null, text) : document.createTextNode(text));
    }
    box.appendChild(pre);
    return box;
  }

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function best(iterations) {
    let found = null;
    for (const it of iterations) {
      if (it.evaluation && (found === null || it.evaluation.score > found.evaluation.score)) found = it;
    }
    return found;
  }

  function trend(iterations, threshold, bestNumber) {
    const bottom = TOP + PLOT_H;
    const width = Math.max(GAP + iterations.length * (BAR_W + GAP), 120);
    const fig = el("figure", "trend");
    fig.id = "lab-trend";
    fig.appendChild(el("figcaption", null, "Score by iteration" +
      (threshold === null || threshold === undefined ? "" : " \u00b7 line: threshold " + threshold)));
    const chart = svg("svg", {"class": "trend", viewBox: "0 0 " + width + " " + (bottom + LABELS),
      width: width, height: bottom + LABELS, role: "img", "aria-label": "Score by iteration"});
    chart.appendChild(svg("line", {"class": "axis", x1: 0, x2: width, y1: bottom, y2: bottom}));
    if (threshold !== null && threshold !== undefined) {
      const y = bottom - Math.min(Math.max(threshold, 0), 1) * PLOT_H;
      chart.appendChild(svg("line", {"class": "threshold", x1: 0, x2: width, y1: y, y2: y}));
    }
    iterations.forEach((it, index) => {
      const x = GAP + index * (BAR_W + GAP);
      const e = it.evaluation;
      const height = e ? Math.max(Math.min(Math.max(e.score, 0), 1) * PLOT_H, 1) : 3;
      const kind = e ? (e.meets_criteria ? "pass" : "fail") : (it.error ? "error" : "unscored");
      const label = e ? e.score.toFixed(2) : (it.error ? "error" : "\u2013");
      const g = svg("g", {"class": "bar " + kind + (it.iteration_number === bestNumber ? " best" : ""),
        "data-iteration": it.iteration_number});
      g.appendChild(svg("title", {}, "Iteration " + it.iteration_number + ": " + label));
      g.appendChild(svg("rect", {x: x, y: bottom - height, width: BAR_W, height: height}));
      g.appendChild(svg("text", {"class": "score", x: x + 17, y: bottom - height - 3}, label));
      g.appendChild(svg("text", {"class": "n", x: x + 17, y: bottom + 13}, String(it.iteration_number)));
      chart.appendChild(g);
    });
    fig.appendChild(chart);
    progress.replaceChildren(fig);
  }

  function runLink(runId) {
    const a = el("a", null, runId);
    a.href = "/runs/" + encodeURIComponent(runId);
    return a;
  }

  function showStopped(run) {
    const found = best(run.iterations);
    const n = run.iterations.length;
    say("Stopped after " + n + " iteration(s): no further model call is made" +
      (run.runId ? "; the run is kept as interrupted." : "."), "stopped");
    if (run.runId) {
      status.appendChild(document.createTextNode(" "));
      status.appendChild(runLink(run.runId));
    }
    trend(run.iterations, run.threshold, found ? found.iteration_number : null);
    if (!found) return;
    for (const art of list.querySelectorAll("article.iteration")) {
      if (Number(art.dataset.iteration) === found.iteration_number) art.classList.add("best");
    }
    result.replaceChildren();
    result.appendChild(el("h2", null, "Best answer so far"));
    result.appendChild(el("p", null, "stopped · iteration " + found.iteration_number + " of " + n +
      ", score " + found.evaluation.score.toFixed(2)));
    result.appendChild(el("pre", "answer final", found.answer));
    result.hidden = false;
  }

  function showResult(r) {
    const best = r.metadata.best_iteration;
    for (const art of list.querySelectorAll("article.iteration")) {
      if (Number(art.dataset.iteration) === best) {
        art.classList.add("best");
        art.querySelector("h3").appendChild(el("span", "badge best-mark", "best answer"));
      }
    }
    result.replaceChildren();
    // as the CLI says it: never "score unscored" when no iteration has a score
    const state = (r.success ? "met the threshold" : "did not meet the threshold") +
      (r.metadata.threshold === undefined || r.metadata.threshold === null ? "" : " " + r.metadata.threshold);
    const outcome = best === null || best === undefined
      ? "no iteration was scored (" + r.total_iterations + " tried): " + state
      : state + " · iteration " + best + " of " + r.total_iterations + ", score " + r.final_score.toFixed(2);
    result.appendChild(el("h2", null, best === null || best === undefined ? "Last answer written" : "Best answer"));
    const p = el("p", null, outcome + " · run ");
    p.appendChild(runLink(r.metadata.run_id));
    result.appendChild(p);
    result.appendChild(el("pre", "answer final", r.final_answer));
    result.hidden = false;
    trend(current ? current.iterations : r.iterations, r.metadata.threshold, best);
    say("Done: " + r.total_iterations + " iteration(s).", "done");
  }

  function handle(run, name, data) {
    const value = JSON.parse(data);
    if (name === "run") {
      run.runId = value.run_id;
    } else if (name === "iteration") {
      run.iterations.push(value);
      list.appendChild(card(value));
      const found = best(run.iterations);
      trend(run.iterations, run.threshold, found ? found.iteration_number : null);
      say("Iteration " + value.iteration_number + " evaluated…", "running");
    } else if (name === "result") {
      showResult(value);
    } else if (name === "error") {
      say("Error: " + value.detail, "error");
    }
  }

  function problem(body) {
    if (body && Array.isArray(body.detail)) {
      return body.detail.map(d => (d.loc || []).slice(1).join(".") + ": " + d.msg).join("; ");
    }
    return body && body.detail ? String(body.detail) : "request failed";
  }

  async function submit(event) {
    event.preventDefault();
    const data = new FormData(form);
    const payload = {
      instruct: data.get("instruct"),
      resp_format: data.get("resp_format"),
      eval_crit: data.get("eval_crit"),
      iter_max: Number(data.get("iter_max")),
      score_threshold: Number(data.get("score_threshold")),
    };
    for (const key of ["model", "judge_model"]) {
      const v = String(data.get(key) || "").trim();
      if (v) payload[key] = v;
    }
    list.replaceChildren();
    progress.replaceChildren();
    result.hidden = true;
    button.disabled = true;
    const run = {controller: new AbortController(), stopped: false, runId: null, iterations: [],
      threshold: payload.score_threshold};
    current = run;
    stop.hidden = false;
    stop.disabled = false;
    say("Generating…", "running");
    try {
      const response = await fetch("/api/generate-answer/stream", {
        method: "POST",
        headers: {"Content-Type": "application/json", "Accept": "text/event-stream"},
        body: JSON.stringify(payload),
        credentials: "same-origin",
        signal: run.controller.signal,
      });
      if (!response.ok) {
        let body = null;
        try { body = await response.json(); } catch (e) { body = null; }
        say("Error " + response.status + ": " + problem(body), "error");
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, {stream: true});
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let name = "message";
          const lines = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) name = line.slice(7);
            else if (line.startsWith("data: ")) lines.push(line.slice(6));
          }
          if (lines.length) handle(run, name, lines.join("\n"));
        }
      }
      if (run.stopped) showStopped(run);
    } catch (err) {
      if (run.stopped) showStopped(run);
      else say("Error: " + err, "error");
    } finally {
      button.disabled = false;
      stop.hidden = true;
      if (current === run) current = null;
    }
  }

  function halt() {
    const run = current;
    if (!run || run.stopped) return;
    run.stopped = true;
    stop.disabled = true;
    say("Stopping…", "running");
    run.controller.abort();  // closing the stream stops the Lab on the server
  }

  form.addEventListener("submit", submit);
  stop.addEventListener("click", halt);
})();
