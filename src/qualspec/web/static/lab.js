// The Lab page: posts the form as JSON to /api/generate-answer/stream and shows each
// iteration as its server-sent event arrives. Model text is only ever set as textContent.
"use strict";
(function () {
  const form = document.getElementById("lab-form");
  const list = document.getElementById("iterations");
  const status = document.getElementById("lab-status");
  const result = document.getElementById("lab-result");
  const button = document.getElementById("lab-submit");

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
    } else {
      art.appendChild(el("p", it.error ? "error" : "unscored", it.error || it.unscored_reason));
    }
    return art;
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
    const a = el("a", null, r.metadata.run_id);
    a.href = "/runs/" + encodeURIComponent(r.metadata.run_id);
    p.appendChild(a);
    result.appendChild(p);
    result.appendChild(el("pre", "answer final", r.final_answer));
    result.hidden = false;
    status.textContent = "Done: " + r.total_iterations + " iteration(s).";
  }

  function handle(name, data) {
    const value = JSON.parse(data);
    if (name === "iteration") {
      list.appendChild(card(value));
      status.textContent = "Iteration " + value.iteration_number + " evaluated…";
    } else if (name === "result") {
      showResult(value);
    } else if (name === "error") {
      status.textContent = "Error: " + value.detail;
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
    result.hidden = true;
    button.disabled = true;
    status.textContent = "Generating…";
    try {
      const response = await fetch("/api/generate-answer/stream", {
        method: "POST",
        headers: {"Content-Type": "application/json", "Accept": "text/event-stream"},
        body: JSON.stringify(payload),
        credentials: "same-origin",
      });
      if (!response.ok) {
        let body = null;
        try { body = await response.json(); } catch (e) { body = null; }
        status.textContent = "Error " + response.status + ": " + problem(body);
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
          if (lines.length) handle(name, lines.join("\n"));
        }
      }
    } catch (err) {
      status.textContent = "Error: " + err;
    } finally {
      button.disabled = false;
    }
  }

  form.addEventListener("submit", submit);
})();
