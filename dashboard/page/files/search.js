// search.js streams a search into the home page's results table: it posts
// the form's query to POST /api/domain/search and writes each NDJSON row
// as it arrives (the rows of names checked first show first). Without it
// the form is a plain GET /search, which answers every row at once.
"use strict";
(function () {
  const form = document.getElementById("search-form");
  if (!form || !window.fetch || !window.TextDecoder || !window.ReadableStream) {
    return;
  }
  const table = document.getElementById("results");
  const body = table.tBodies[0];
  const status = document.getElementById("search-status");

  // money writes cents as the server's pages do: "1,234.56 USD".
  function money(cents, currency) {
    return (cents / 100).toLocaleString("en-US", {minimumFractionDigits: 2, maximumFractionDigits: 2}) + " " + currency;
  }

  // labels are the table's column names, which a phone shows beside
  // each cell (site.css).
  const labels = Array.from(table.tHead.rows[0].cells).map(function (th) { return th.textContent; });

  function cell(row, text) {
    const td = row.insertCell();
    td.textContent = text || "";
    if (labels[td.cellIndex]) {
      td.dataset.label = labels[td.cellIndex];
    }
    return td;
  }

  // placeholder adds the row of a name still being checked.
  function placeholder(domain) {
    const row = body.insertRow();
    row.dataset.domain = domain;
    row.className = "checking";
    cell(row, domain);
    cell(row, "checking…").className = "state";
    cell(row);
    cell(row);
    return row;
  }

  // fill writes a decided row into its place.
  function fill(tr, r) {
    tr.className = "state-" + r.state;
    tr.cells[0].textContent = r.domain_unicode || r.domain;
    tr.cells[1].textContent = r.state_label;
    const p = r.price;
    tr.cells[2].textContent = r.available && p && p.register_cents != null ? money(p.register_cents, p.currency) + " a year" : "";
    tr.cells[3].replaceChildren();
    if (r.listing) {
      const a = document.createElement("a");
      a.href = "/market/" + encodeURIComponent(r.domain);
      a.textContent = "In the marketplace";
      tr.cells[3].append(a);
    }
  }

  async function problem(res) {
    try {
      const e = (await res.json()).error;
      return e.message || e;
    } catch (_) {
      return "The search failed (" + res.status + ").";
    }
  }

  form.addEventListener("submit", async function (ev) {
    ev.preventDefault();
    const q = form.elements.q.value.trim();
    if (!q) {
      return;
    }
    const old = document.getElementById("search-error");
    if (old) {
      old.remove();
    }
    body.replaceChildren();
    table.hidden = true;
    delete status.dataset.done;
    status.textContent = "Searching…";
    history.replaceState(null, "", "/search?q=" + encodeURIComponent(q));
    const started = performance.now();
    let res;
    try {
      res = await fetch("/api/domain/search", {
        method: "POST",
        headers: {"Content-Type": "application/json", "Accept": "application/x-ndjson"},
        body: JSON.stringify({q: q}),
      });
    } catch (e) {
      status.textContent = "The search could not reach the service: " + e.message;
      return;
    }
    if (!res.ok) {
      status.textContent = await problem(res);
      return;
    }
    const rows = new Map();
    function handle(ev) {
      switch (ev.kind) {
      case "header":
        ev.domains.forEach(function (d) { rows.set(d, placeholder(d)); });
        table.hidden = false;
        break;
      case "row":
        fill(rows.get(ev.domain) || placeholder(ev.domain), ev);
        if (!table.dataset.firstRowMs) {
          table.dataset.firstRowMs = String(Math.round(performance.now() - started));
        }
        break;
      case "done":
        status.textContent = ev.count + " names checked in " + ev.duration_ms + " ms.";
        status.dataset.done = "1";
        break;
      }
    }
    delete table.dataset.firstRowMs;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const chunk = await reader.read();
      if (chunk.value) {
        buf += decoder.decode(chunk.value, {stream: true});
      }
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) {
          handle(JSON.parse(line));
        }
      }
      if (chunk.done) {
        break;
      }
    }
  });
}());
