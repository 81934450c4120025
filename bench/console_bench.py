"""Console timings in headless chromium, against the server scripts/test-browser.sh starts:

    scripts/test-browser.sh --bench

Prints one JSON line per figure (milliseconds, medians of --repeat runs, with the issue's
target beside each):
  console_first_load        navigation start → login form usable (cold page)
  console_ready_logged_in   navigation start → editor usable, credentials in the tab already
  console_table_10000_rows  a fetched 10,000-row result → table drawn (render only)
  console_query_10000_rows  Ctrl-Enter → 10,000 rows shown (server, network, render)
  console_graph_layout      a fetched 2,000-node, 5,000-edge result → laid out, drawn
The layout is the console's default for a graph that size: cytoscape's `concentric` (rings
by degree; `cose`, used up to 300 nodes, took minutes here).
"""

import json
import os
import random
import shutil
import statistics
import sys

from playwright.sync_api import sync_playwright

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "browser"))
from conftest import PASSWORD, URL, USER, query  # noqa: E402

REPEAT = int(os.environ.get("PLEXUS_BENCH_REPEAT", "3"))
NODES, EDGES = 2000, 5000


def figure(name, samples, target):
    load = open("/proc/loadavg").read().split()[0]
    print(json.dumps({
        "name": name, "value": round(statistics.median(samples), 1), "unit": "ms",
        "target": target, "samples": [round(s, 1) for s in samples], "loadavg_1m": load,
    }), flush=True)


def seed_graph():
    query("MATCH (n:G) DETACH DELETE n")
    query("CREATE INDEX g_id FOR (g:G) ON (g.id)")
    query("UNWIND range(0, $n - 1) AS i CREATE (:G {id: i, name: 'g' + toString(i)})", {"n": NODES})
    rng = random.Random(7)
    pairs = [[rng.randrange(NODES), rng.randrange(NODES)] for _ in range(EDGES)]
    query("UNWIND $pairs AS p MATCH (a:G {id: p[0]}), (b:G {id: p[1]}) CREATE (a)-[:E]->(b)",
          {"pairs": pairs})


RENDER = """async (statement) => {
  const { data } = await api("POST", "/db/neo4j/query/v2", { statement, parameters: {} });
  const started = performance.now();
  await showResult(data);
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r)));
  return { ms: performance.now() - started, rows: state.rows.length,
           nodes: state.cy ? state.cy.nodes().length : 0,
           edges: state.cy ? state.cy.edges().length : 0 };
}"""


def step(what):
    print(f"console_bench: {what}", file=sys.stderr, flush=True)


def main():
    step("seeding the graph")
    seed_graph()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        first, ready, table, query_ms, layout = [], [], [], [], []
        for _ in range(REPEAT):
            page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
            page.goto(URL)
            page.wait_for_selector("#login-user", state="visible")
            first.append(page.evaluate("performance.now()"))
            page.fill("#login-user", USER)
            page.fill("#login-password", PASSWORD)
            page.click("#login-button")
            page.wait_for_selector("body[data-ready='true']")
            page.reload()
            page.wait_for_selector("body[data-ready='true']")
            ready.append(page.evaluate("performance.now()"))
            step("10,000 rows")
            out = page.evaluate(RENDER, "UNWIND range(1, 10000) AS i RETURN i, 'row ' + toString(i) AS s")
            assert out["rows"] == 10000, out
            table.append(out["ms"])
            page.fill("#editor", "UNWIND range(1, 10000) AS i RETURN i, 'row ' + toString(i) AS s")
            page.evaluate("window.t0 = performance.now(); document.getElementById('status').textContent = ''")
            page.focus("#editor")
            page.keyboard.press("Control+Enter")
            page.wait_for_function("document.getElementById('status').textContent.startsWith('10000 rows')")
            query_ms.append(page.evaluate("performance.now() - window.t0"))
            step("graph layout")
            out = page.evaluate(RENDER, "MATCH (a:G)-[r:E]->(b:G) RETURN a, r, b")
            assert out["nodes"] <= NODES and out["edges"] == EDGES, out
            layout.append(out["ms"])
            page.close()
        browser.close()
    figure("console_first_load", first, 300)
    figure("console_ready_logged_in", ready, 300)
    figure("console_table_10000_rows", table, 1000)
    figure("console_query_10000_rows", query_ms, 1000)
    figure("console_graph_layout_2000_nodes_5000_edges", layout, 2000)


if __name__ == "__main__":
    main()
