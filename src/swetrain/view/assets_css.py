"""The page's stylesheet (inlined into every page: no network)."""

CSS = r"""
:root { --fg:#1d232a; --muted:#667; --line:#d8dde3; --bg:#fff; --soft:#f4f6f8; --ok:#1a7f37; --no:#c62828;
  --warn:#9a6700; --train:#c8efd0; --prompt:#eef1f5; --obs:#fff; --inv:#ffb74d; --bad:#d32f2f; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); margin: 0; background: var(--bg); }
header { padding: 10px 18px; border-bottom: 1px solid var(--line); display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 17px; margin: 0; }
header .path { color: var(--muted); font-family: ui-monospace, monospace; font-size: 12px; }
nav { display: flex; gap: 4px; padding: 6px 18px; border-bottom: 1px solid var(--line); background: var(--soft); }
nav button { border: 1px solid var(--line); background: #fff; padding: 4px 12px; border-radius: 4px; cursor: pointer; font-size: 13px; }
nav button.active { background: #1d232a; color: #fff; border-color: #1d232a; }
main { padding: 12px 18px; }
section.tab { display: none; } section.tab.active { display: block; }
h2 { font-size: 15px; margin: 18px 0 6px; } h3 { font-size: 13px; margin: 12px 0 4px; }
table { border-collapse: collapse; font-size: 12.5px; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: var(--soft); position: sticky; top: 0; cursor: pointer; user-select: none; white-space: nowrap; }
th.sorted-asc::after { content: " \25B2"; font-size: 9px; } th.sorted-desc::after { content: " \25BC"; font-size: 9px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
#task-table tbody tr { cursor: pointer; }
#task-table td.iid { white-space: nowrap; font-family: ui-monospace, monospace; font-size: 12px; }
.table-wrap { overflow-x: auto; } #task-table tbody tr:hover { background: #eef5ff; }
#task-table tbody tr.selected { background: #dbeafe; }
.yes { color: var(--ok); font-weight: 600; } .no { color: var(--no); }
.notes { margin: 8px 18px 0; }
.note { background: #fff8e1; border: 1px solid #f0d58c; color: #5c4400; padding: 5px 9px; border-radius: 4px; margin: 4px 0; font-size: 12.5px; }
.note.bad { background: #fdecea; border-color: #f5b5ae; color: #7a1c14; }
pre { background: var(--soft); border: 1px solid var(--line); padding: 8px; border-radius: 4px; overflow: auto;
  font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; word-break: break-word; max-height: 520px; margin: 4px 0; }
.filters { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; margin-bottom: 8px; font-size: 12.5px; }
.filters label { display: flex; gap: 4px; align-items: center; }
.filters select, .filters input { font-size: 12.5px; padding: 2px 4px; }
.count { color: var(--muted); font-size: 12.5px; }
.chips { display: flex; gap: 6px; flex-wrap: wrap; margin: 4px 0 8px; }
.chip { background: var(--soft); border: 1px solid var(--line); border-radius: 10px; padding: 1px 8px; font-size: 12px; }
.chip.yes { background: #e6f4ea; border-color: #9fd4ad; } .chip.no { background: #fdecea; border-color: #f5b5ae; }
.ep-cols { display: grid; gap: 14px; } .ep-cols.two { grid-template-columns: 1fr 1fr; }
.ep-col { min-width: 0; }
.msg { border: 1px solid var(--line); border-radius: 5px; margin: 6px 0; }
.msg .who { font-size: 11.5px; font-weight: 600; padding: 2px 8px; background: var(--soft); border-bottom: 1px solid var(--line); display: flex; gap: 8px; }
.msg pre { border: 0; margin: 0; max-height: 400px; background: #fff; }
.msg.assistant .who { background: #e3f2fd; } .msg.tool .who { background: #f3e5f5; } .msg.user .who { background: #fff3e0; }
.msg.invalid { border-color: var(--inv); } .msg.invalid .who { background: #ffe0b2; }
.diff span { display: block; min-height: 1.4em; }
.diff .add { color: #116329; background: #e6ffec; display: block; } .diff .del { color: #82071e; background: #ffebe9; display: block; }
.diff .hunk { color: #0550ae; display: block; } .diff .file { font-weight: 700; display: block; }
.st-PASSED, .st-XFAIL { color: var(--ok); font-weight: 600; } .st-FAILED, .st-ERROR, .st-MISSING { color: var(--no); font-weight: 600; } .st-SKIPPED { color: var(--warn); }
.tokens { font: 12px/1.9 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; word-break: break-all;
  border: 1px solid var(--line); border-radius: 4px; padding: 8px; max-height: 640px; overflow: auto; background: #fff; }
.tk { border-radius: 2px; box-shadow: inset -1px 0 0 rgba(0,0,0,0.10); }
.tk.m0 { color: #555; } .tk.pr { background: var(--prompt); color: #777; }
.tk.m1 { background: var(--train); color: #0b3d17; }
.tk.inv { box-shadow: inset 0 -3px 0 var(--inv), inset -1px 0 0 rgba(0,0,0,0.10); }
.tk.bad { outline: 2px solid var(--bad); outline-offset: -1px; }
.tk.eot { font-weight: 700; }
.segtag { display: inline-block; font: 10px/1.2 system-ui, sans-serif; background: #1d232a; color: #fff; border-radius: 3px; padding: 0 4px; margin: 0 2px; vertical-align: 1px; }
.segtag.cut { background: var(--bad); } .segtag.inv { background: #e65100; }
.gap { display: block; text-align: center; color: var(--muted); background: var(--soft); margin: 6px 0; font: 12px system-ui; }
table.turns { margin: 4px 0 6px; } table.turns tr.warn { background: #fff4e5; }
.legend { display: flex; gap: 10px; flex-wrap: wrap; align-items: center; font-size: 12px; margin: 4px 0; }
.legend .tk { padding: 0 4px; }
.prompt-tokens > summary { font-size: 12.5px; color: var(--muted); margin: 4px 0; }
.prompt-tokens .tokens { max-height: 300px; margin-bottom: 6px; }
.metrics { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 10px; }
.metric { border: 1px solid var(--line); border-radius: 4px; padding: 4px 6px; }
.metric .name { font-size: 11.5px; font-family: ui-monospace, monospace; word-break: break-all; }
.metric .last { font-size: 11.5px; color: var(--muted); }
.plots img { max-width: 100%; border: 1px solid var(--line); margin: 4px 0; }
.plots figure { margin: 8px 0; } .plots figcaption { font-size: 12px; color: var(--muted); }
.kv td:first-child { color: var(--muted); white-space: nowrap; }
.empty { color: var(--muted); font-style: italic; }
details > summary { cursor: pointer; }
.twocol { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
"""
