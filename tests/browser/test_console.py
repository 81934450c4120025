"""The web console in headless chromium: log in, run a query, table and graph, expand a node,
PROFILE tree, syntax error position, values shown as text, wrong credentials."""

from conftest import PASSWORD, USER, query, run, screenshot


def graph_counts(page):
    return (
        int(page.get_attribute("#graph", "data-nodes")),
        int(page.get_attribute("#graph", "data-edges")),
    )


def test_query_shows_table_and_graph_and_expands(console):
    run(console, "MATCH (a:Person)-[r:KNOWS]->(b:Person) RETURN a, r, b")
    assert console.text_content("#status").startswith("2 rows")
    # The graph: Ada, Bob, Cy and the two KNOWS relationships.
    assert graph_counts(console) == (3, 2)
    # Double-click Ada: her LIVES_IN neighbour Oslo joins the graph.
    position = console.evaluate(
        """(() => {
            const node = state.cy.nodes().filter((n) => n.data('caption') === 'Ada')[0];
            const box = document.getElementById('graph').getBoundingClientRect();
            const p = node.renderedPosition();
            return { x: box.left + p.x, y: box.top + p.y };
        })()"""
    )
    console.mouse.dblclick(position["x"], position["y"])
    console.wait_for_function("document.getElementById('graph').dataset.nodes === '4'")
    assert graph_counts(console) == (4, 3)
    screenshot(console, "console-graph.png")
    # The table: one row per result row, the captions as text.
    console.click("#tabs button[data-tab='table']")
    rows = console.locator("#table .row")
    assert rows.count() == 2
    assert "Ada" in rows.nth(0).text_content()
    screenshot(console, "console-table.png")


def test_table_is_virtualised(console):
    run(console, "UNWIND range(1, 10000) AS i RETURN i, 'row ' + toString(i) AS label")
    assert console.text_content("#status").startswith("10000 rows")
    assert console.get_attribute("#table", "data-rows") == "10000"
    drawn = console.locator("#table .row").count()
    assert 0 < drawn < 200, drawn
    console.evaluate("document.getElementById('table').scrollTop = 26 * 5000")
    console.wait_for_function(
        "[...document.querySelectorAll('#table .row .num')].some((c) => c.textContent === '5001')"
    )


def test_profile_shows_a_plan_tree(console):
    run(console, "PROFILE MATCH (p:Person) WHERE p.name <> 'Cy' RETURN p.name")
    assert not console.is_hidden("#view-plan")
    operators = console.locator("#plan .op")
    assert operators.count() >= 2
    assert "rows 2" in console.text_content("#plan")
    assert console.locator("#plan ul ul").count() >= 1  # nested: a tree, not a list
    screenshot(console, "console-plan.png")


def test_syntax_error_shows_line_and_column(console):
    run(console, "MATCH (n)\nRETURN n +")
    error = console.text_content("#error")
    assert "Neo.ClientError.Statement.SyntaxError" in error
    assert "line 2, column" in error


def test_stored_markup_is_shown_as_text(console):
    payload = "<script>window.pwned = 1</script><img src=x onerror='window.pwned = 2'>"
    query("CREATE (:Note {text: $t})", {"t": payload})
    run(console, "MATCH (n:Note) RETURN n.text AS text, n")
    console.click("#tabs button[data-tab='table']")
    cell = console.locator("#table .row .cell").nth(1)
    assert payload in cell.text_content()
    assert console.evaluate("window.pwned") is None
    assert console.locator("#table script, #table img").count() == 0
    query("MATCH (n:Note) DELETE n")


def test_history_and_schema(console):
    run(console, "RETURN 1 AS one")
    assert console.text_content("#history li") == "RETURN 1 AS one"
    assert "Person" in console.text_content("#schema")
    assert "KNOWS" in console.text_content("#schema")


def test_wrong_password_is_refused(browser, seeded):
    page = browser.new_page(bypass_csp=True)
    page.goto(seeded)
    page.fill("#login-user", USER)
    page.fill("#login-password", PASSWORD + "-wrong")
    page.click("#login-button")
    page.wait_for_function("document.getElementById('login-error').textContent !== ''")
    assert "unauthorized" in page.text_content("#login-error")
    assert page.is_hidden("#app")
    page.close()
