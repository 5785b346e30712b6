/// The dashboard's page, script and style, compiled into the binary: nothing is read from disk
/// and nothing comes from elsewhere (works offline). Charts are SVG from the Swift renderer.
enum Assets {
    struct File {
        var contentType: String
        var text: String
    }

    static let files: [String: File] = [
        "/index.html": File(contentType: "text/html; charset=utf-8", text: page),
        "/app.js": File(contentType: "text/javascript; charset=utf-8", text: DashboardScript.source),
        "/style.css": File(contentType: "text/css; charset=utf-8", text: style),
    ]

    static let page = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>tsdb</title>
        <link rel="stylesheet" href="/style.css">
        </head>
        <body>
        <header><a href="#/" class="brand">tsdb</a>
        <nav><a href="#/">Overview</a><a href="#/sleep">Sleep</a><a href="#/workouts">Workouts</a></nav></header>
        <main id="main"><p class="muted">Loading…</p></main>
        <script src="/app.js"></script>
        </body>
        </html>

        """

    static let style = """
        :root{--bg:#fff;--fg:#1f2328;--muted:#57606a;--line:#e6e8eb;--accent:#2f6fdb;--data:#2f6fdb;--none:#f6d2d4}
        @media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--line:#262c36;
        --accent:#58a6ff;--data:#58a6ff;--none:#6e2b2f}}
        body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,sans-serif}
        header{display:flex;gap:24px;align-items:center;padding:10px 20px;border-bottom:1px solid var(--line)}
        header a{color:var(--fg);text-decoration:none;margin-right:14px}.brand{font-weight:700}
        main{padding:16px 20px;max-width:1100px}a{color:var(--accent)}.muted{color:var(--muted)}
        table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 10px;border-bottom:1px solid var(--line);
        text-align:left;font-variant-numeric:tabular-nums}th{font-weight:600}
        .chart svg{max-width:100%;height:auto}.controls button{margin-right:6px}
        .calendar{display:flex;flex-wrap:wrap;gap:2px;max-width:1000px}.calendar span{width:10px;height:10px;
        background:var(--data);border-radius:2px}.calendar span.none{background:var(--none)}
        .error{color:#d1242f}
        """
}
