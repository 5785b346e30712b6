/// The dashboard's only script: routing, fetching, zoom and pan. Charts arrive as SVG from the
/// server (the renderer `tsdb plot` uses), with native tooltips; the script only asks for the
/// range on screen, and the server picks the bucket size for it.
enum DashboardScript {
    static let source = #"""
        "use strict";
        const tsdb = window.tsdb = { fetches: [] };
        const main = document.getElementById("main");
        const DAY = 86400e6;
        const entities = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
        const esc = s => String(s ?? "").replace(/[&<>"]/g, c => entities[c]);
        const qs = o => Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== "")
          .map(([k, v]) => k + "=" + encodeURIComponent(v)).join("&");

        async function get(path, params, kind = "json") {
          const url = path + "?" + qs(params);
          const response = await fetch(url);
          tsdb.fetches.push({ url, bucket: response.headers.get("X-TSDB-Bucket") });
          if (!response.ok) {
            const e = await response.json().catch(() => ({ error: response.statusText }));
            throw new Error((e.parameter ? e.parameter + ": " : "") + e.error);
          }
          return kind === "json" ? response.json() : response.text();
        }

        function table(headers, rows) {
          return "<table><tr>" + headers.map(h => "<th>" + esc(h) + "</th>").join("") + "</tr>" +
            rows.map(r => "<tr>" + r.map(c => "<td>" + c + "</td>").join("") + "</tr>").join("") + "</table>";
        }
        const num = v => v === null || v === undefined ? "" : (Math.round(v * 10) / 10).toLocaleString("en");
        const amount = (v, unit) => v === null ? "" : num(v) + " " + esc(unit);
        const heartRate = h => h && h.count ? `min ${num(h.min)}, mean ${num(h.mean)}, max ${num(h.max)}` : "";

        async function overview() {
          const [types, days] = await Promise.all([get("/api/types", {}), get("/api/days", {})]);
          let html = "<h1>Your data</h1>" + table(["type", "kind", "samples", "first", "last", ""], types.map(t => [
            `<a href="#/type/${esc(t.name)}">${esc(t.name)}</a>`, esc(t.kind), num(t.samples),
            esc(t.first.slice(0, 10)), esc(t.last.slice(0, 10)), `<a href="#/samples/${esc(t.name)}">samples</a>`]));
          html += `<h2>Days with data</h2><p class="muted">${days.days} day files from ${esc(days.first)} to ` +
            `${esc(days.last)}; ${days.missing.length} gaps (red).</p><div class="calendar" id="calendar"></div>`;
          main.innerHTML = html;
          if (!days.first) return;
          const missing = new Set();
          for (const [a, b] of days.missing)
            for (let t = Date.parse(a); t <= Date.parse(b); t += 864e5)
              missing.add(new Date(t).toISOString().slice(0, 10));
          const cells = [];
          for (let t = Date.parse(days.first); t <= Date.parse(days.last); t += 864e5) {
            const d = new Date(t).toISOString().slice(0, 10);
            cells.push(`<span title="${d}"${missing.has(d) ? ' class="none"' : ""}></span>`);
          }
          document.getElementById("calendar").innerHTML = cells.join("");
        }

        async function chart(type, view, element) {
          const svg = await get("/api/chart.svg", { type, from: view.from, to: view.to }, "text");
          element.innerHTML = svg;
        }

        function zoomable(type, view, redraw) {
          const go = v => {
            location.hash = `#/type/${encodeURIComponent(type)}?from=${Math.round(v.from)}&to=${Math.round(v.to)}`;
          };
          const zoom = (factor, at = 0.5) => {
            const span = (view.to - view.from) * factor;
            const center = view.from + (view.to - view.from) * at;
            go({ from: center - span * at, to: center + span * (1 - at) });
          };
          const pan = f => { const d = (view.to - view.from) * f; go({ from: view.from + d, to: view.to + d }); };
          document.getElementById("in").onclick = () => zoom(0.25);
          document.getElementById("out").onclick = () => zoom(4);
          document.getElementById("left").onclick = () => pan(-0.5);
          document.getElementById("right").onclick = () => pan(0.5);
          const area = document.getElementById("chart");
          area.onwheel = e => {
            e.preventDefault();
            const box = area.getBoundingClientRect();
            zoom(e.deltaY < 0 ? 0.5 : 2, Math.min(Math.max((e.clientX - box.left) / box.width, 0), 1));
          };
        }

        function viewOf(params, type) {
          const from = Number(params.get("from")), to = Number(params.get("to"));
          if (from && to && to > from) return { from, to };
          if (!type) return null;
          return { from: Math.max(type.firstMicros, type.lastMicros - 365 * DAY), to: type.lastMicros + 1 };
        }

        async function typePage(name, params) {
          const types = await get("/api/types", {});
          const type = types.find(t => t.name === name || t.type === name);
          if (!type) throw new Error(`no such type: ${name} (this store has ${types.map(t => t.name).join(", ")})`);
          const view = viewOf(params, type);
          main.innerHTML = `<h1>${esc(name)}</h1><div class="controls"><button id="out">− zoom out</button>` +
            `<button id="in">+ zoom in</button><button id="left">←</button><button id="right">→</button> ` +
            `<a href="#/samples/${esc(name)}?from=${view.from}&to=${view.to}">samples in this range</a></div>` +
            `<div class="chart" id="chart"></div><h2>This range</h2><div id="stats" class="muted">…</div>`;
          zoomable(name, view);
          await chart(name, view, document.getElementById("chart"));
          const stats = await get("/api/stats", { type: name, from: view.from, to: view.to });
          const keys = stats.total ? Object.keys(stats.total).filter(k => k !== "start" && k !== "end") : [];
          document.getElementById("stats").innerHTML = table(["source", ...keys],
            [["all (de-duplicated)", ...keys.map(k => num(stats.total[k]))]].concat(
              stats.sources.map(s => [esc(s.source), ...keys.map(k => num(s[k]))])));
        }

        async function sleepPage(params) {
          const types = await get("/api/types", {});
          const type = types.find(t => t.name === "SleepAnalysis");
          if (!type) { main.innerHTML = "<h1>Sleep</h1><p>No sleep samples in this store.</p>"; return; }
          const view = viewOf(params, type);
          const last = { from: Math.max(view.from, view.to - 30 * DAY), to: view.to };
          main.innerHTML = '<h1>Sleep</h1><div class="chart" id="chart"></div><div id="nights"></div>';
          await chart("SleepAnalysis", last, document.getElementById("chart"));
          const nights = await get("/api/sleep", { from: last.from, to: last.to });
          const stages = ["deep", "core", "REM", "awake"];
          document.getElementById("nights").innerHTML = table(["night to", "bed", "up", "asleep", ...stages],
            nights.reverse().map(n => [esc(n.date), esc(n.bedtime.slice(11, 16)), esc(n.wake.slice(11, 16)),
              num(n.asleepMinutes / 60) + " h", ...stages.map(s => num(n.stages[s]) + " min")]));
        }

        async function workoutsPage() {
          const list = await get("/api/workouts", {});
          const heads = ["start", "activity", "minutes", "distance", "energy", "heart rate (tsdb)"];
          main.innerHTML = "<h1>Workouts</h1>" + table(heads, list.reverse().map(w => [
              `<a href="#/workout/${w.startMicros}/${w.endMicros}">${esc(w.start.slice(0, 16))}</a>`,
              esc(w.activity), num(w.minutes), amount(w.distance, w.distanceUnit), amount(w.energy, w.energyUnit),
              heartRate(w.heartRate)]));
        }

        async function workoutPage(from, to) {
          const w = (await get("/api/workouts", { from, to: Number(from) + 1 }))[0];
          if (!w) throw new Error("no workout starts at " + from);
          main.innerHTML = `<h1>${esc(w.activity)}, ${esc(w.start.slice(0, 16))}</h1>` +
            table(["", "as recorded (Apple)", "from samples (tsdb)"], [
            ["duration", num(w.minutes) + " min", ""], ["distance", amount(w.distance, w.distanceUnit), ""],
            ["energy", amount(w.energy, w.energyUnit), ""],
            ["heart rate", "", heartRate(w.heartRate) || "no samples"]]) +
            '<div class="chart" id="chart"></div>' +
            '<p class="muted">Route: the day files hold no route for this workout.</p>';
          await chart("HeartRate", { from: w.startMicros, to: w.endMicros }, document.getElementById("chart"));
        }

        async function samplesPage(name, params) {
          const offset = Number(params.get("offset") || 0);
          const range = { type: name, from: params.get("from"), to: params.get("to") };
          const page = await get("/api/samples", { ...range, offset, limit: 100 });
          const link = o =>
            `#/samples/${encodeURIComponent(name)}?` + qs({ from: range.from, to: range.to, offset: o });
          main.innerHTML = `<h1>${esc(name)} samples</h1>` +
            `<p><a href="/api/samples?${qs({ ...range, format: "csv" })}">CSV</a> · ` +
            `<a href="/api/samples?${qs({ ...range, format: "ndjson" })}">NDJSON</a> of this range</p>` +
            table(["start", "end", "value", "unit", "source", "device"], page.rows.map(r =>
              [esc(r.start), esc(r.end), esc(r.value), esc(r.unit), esc(r.source), esc(r.device)])) +
            (offset > 0 ? `<a href="${link(Math.max(0, offset - 100))}">← previous</a> ` : "") +
            (page.more ? `<a href="${link(offset + 100)}">next →</a>` : "");
        }

        async function route() {
          const [path, query] = location.hash.slice(1).split("?");
          const params = new URLSearchParams(query || ""), parts = (path || "/").split("/").map(decodeURIComponent);
          try {
            if (parts[1] === "type") await typePage(parts[2], params);
            else if (parts[1] === "sleep") await sleepPage(params);
            else if (parts[1] === "workouts") await workoutsPage();
            else if (parts[1] === "workout") await workoutPage(parts[2], parts[3]);
            else if (parts[1] === "samples") await samplesPage(parts[2], params);
            else await overview();
            // What the page fetched, for people debugging (and the browser test): chart bucket sizes.
            document.body.dataset.buckets = tsdb.fetches.map(f => f.bucket).filter(Boolean).join(",");
            document.body.dataset.ready = location.hash || "#/";
          } catch (e) {
            main.innerHTML = `<p class="error">${esc(e.message)}</p>`;
            document.body.dataset.ready = "error";
          }
        }
        window.addEventListener("hashchange", route);
        route();
        """#
}
