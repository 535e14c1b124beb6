// Live status of a submission page: poll the API until every run has finished, then reload
// once so that results, findings and the source render server-side.
(function () {
  const state = document.getElementById("state");
  if (!state || state.dataset.terminal === "1") return;
  const terminal = new Set(["done", "failed"]);
  async function poll() {
    try {
      const r = await fetch(state.dataset.api, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (r.ok) {
        const body = await r.json();
        state.textContent = body.state;
        for (const run of body.runs) {
          const cell = document.querySelector(`tr[data-run="${run.id}"] .run-state`);
          if (cell) cell.textContent = run.state;
        }
        if (body.runs.every((run) => terminal.has(run.state))) { location.reload(); return; }
      }
    } catch (e) { /* the server is restarting: keep polling */ }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 2000);
})();
