// Live status of a submission page: poll the API until every run has finished, and reload each
// time another run finishes, so that its results (and the "Across hardware" table) render
// server-side as they come.
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
        const finished = body.runs.filter((run) => terminal.has(run.state)).length;
        if (finished > Number(state.dataset.finished || 0)) { location.reload(); return; }
      }
    } catch (e) { /* the server is restarting: keep polling */ }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 2000);
})();
