"""Seeded random graphs and random read queries for the differential test.

GRAPHS
======
A graph is a list of nodes and a list of relationships, built in both databases by one CREATE
statement (`Graph.create_statement`), which is also the first line of every repro. Nodes carry
0-2 of the labels A, B, C and, each with probability ~0.7, the properties

    i  integer in -5..20         f  float (two decimals)       s  short string
    b  boolean                   l  list of integers           m  integer or string (mixed)

Relationships have one of the types R, S, T and the properties w (integer), x (float), s
(string). Self loops and parallel relationships are made on purpose. Nodes and relationships are
compared by content (labels, type, properties), so the graph never needs an id property.

QUERIES
=======
A query is a tree of `T` (a piece of text made of strings and subtrees) and `Seq` (a list of
subtrees joined by a separator). Rendering concatenates the text; the shrinker in difftest.py
edits the tree: it removes `optional` subtrees and `Seq` items and replaces an `expr` subtree by
one of its `expr` descendants or by a small literal. The generator keeps a scope of typed
variables (node, rel, path, int, float, str, bool, list, any) so most queries are well typed;
some deliberately are not, to compare error classes.

Results are compared as multisets of rows, except when the final RETURN has an `order_total`
subtree: an ORDER BY over every returned column, all of them scalars, so the row order is fully
determined (rows that tie are equal). SKIP and LIMIT are only generated under such an ORDER BY,
since otherwise which rows survive is unspecified. Columns whose value is a list in an
unspecified order (`collect(...)`, `labels(n)`, `keys(n)`) are tagged `bag` and compared as
multisets of elements.

WHAT IS NOT GENERATED
=====================
Writes (the graph is fixed), temporal and spatial values, procedures, id() / elementId() (the
databases number elements differently), ORDER BY on nodes (Neo4j orders by id), and the Neo4j 5
syntax outside the query shapes above: type predicates (`x IS :: INTEGER`), `CALL (x) { ...
}`, SHOW commands; nor `exists(n.prop)`, which Neo4j 5 removed. Label expressions (`A&B`,
`!A`, `%`), dynamic labels and types (`$('A')`, `$any([...])`, `$all([...])`) and `[:%]` are
generated in patterns with a small probability.
"""


LABELS = ["A", "B", "C"]
REL_TYPES = ["R", "S", "T"]
STRINGS = ["", "a", "ab", "abc", "b", "ba", "A", "Ab", "x y", " a ", "a,b", "10", "2.5", "true", "é"]
NODE_PROPS = {"i": "int", "f": "float", "s": "str", "b": "bool", "l": "list", "m": "any"}
REL_PROPS = {"w": "int", "x": "float", "s": "str"}
PROP_PROBABILITY = 0.7


def cypher_literal(v):
    """The Cypher text of a Python value (None, bool, int, float, str or list of them)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        text = repr(v)
        return text if ("." in text or "e" in text) else text + ".0"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(v, list):
        return "[" + ", ".join(cypher_literal(x) for x in v) + "]"
    raise ValueError(f"no literal for {v!r}")


def props_text(props):
    if not props:
        return ""
    return " {" + ", ".join(f"{k}: {cypher_literal(v)}" for k, v in sorted(props.items())) + "}"


class Graph:
    """Nodes as (labels, props); relationships as (src, dst, type, props)."""

    def __init__(self, nodes, rels):
        self.nodes = nodes
        self.rels = rels

    def create_statement(self):
        if not self.nodes:
            return None
        parts = [f"(n{i}{''.join(':' + l for l in labels)}{props_text(props)})"
                 for i, (labels, props) in enumerate(self.nodes)]
        parts += [f"(n{s})-[:{t}{props_text(p)}]->(n{d})" for s, d, t, p in self.rels]
        return "CREATE " + ", ".join(parts)

    def without_nodes(self, drop):
        """This graph less the nodes whose indexes are in `drop` and their relationships."""
        keep = [i for i in range(len(self.nodes)) if i not in drop]
        new_index = {old: new for new, old in enumerate(keep)}
        rels = [(new_index[s], new_index[d], t, p) for s, d, t, p in self.rels
                if s in new_index and d in new_index]
        return Graph([self.nodes[i] for i in keep], rels)

    def without_rels(self, drop):
        return Graph(self.nodes, [r for i, r in enumerate(self.rels) if i not in drop])


def random_value(rng, kind):
    if kind == "int":
        return rng.randint(-5, 20)
    if kind == "float":
        return round(rng.uniform(-10, 10), 2)
    if kind == "str":
        return rng.choice(STRINGS)
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "list":
        return [rng.randint(-3, 9) for _ in range(rng.randint(0, 4))]
    if kind == "any":
        return rng.randint(0, 9) if rng.random() < 0.5 else rng.choice(STRINGS)
    raise ValueError(kind)


def random_graph(rng, min_nodes=20, max_nodes=120):
    n = rng.randint(min_nodes, max_nodes)
    nodes = []
    for _ in range(n):
        labels = sorted(rng.sample(LABELS, rng.choice([0, 1, 1, 1, 2])))
        props = {k: random_value(rng, kind) for k, kind in NODE_PROPS.items()
                 if rng.random() < PROP_PROBABILITY}
        nodes.append((labels, props))
    rels = []
    for _ in range(int(n * rng.uniform(1.0, 2.0))):
        s = rng.randrange(n)
        r = rng.random()
        d = s if r < 0.05 else rng.randrange(n)  # some self loops
        t = rng.choice(REL_TYPES)
        props = {k: random_value(rng, kind) for k, kind in REL_PROPS.items()
                 if rng.random() < PROP_PROBABILITY}
        rels.append((s, d, t, props))
        if rng.random() < 0.05:  # a parallel relationship
            rels.append((s, d, rng.choice(REL_TYPES), {}))
    return Graph(nodes, rels)


# --------------------------------------------------------------------------------------------
# Query trees


class T:
    """Text made of strings and subtrees. `kind` 'expr' marks a replaceable expression;
    `optional` marks a subtree the shrinker may delete; `tag` carries generator facts
    (('bag', alias) for columns compared as multisets, 'order_total' for a total ORDER BY)."""

    __slots__ = ("kind", "parts", "optional", "tag")

    def __init__(self, kind, *parts, optional=False, tag=None):
        self.kind = kind
        self.parts = list(parts)
        self.optional = optional
        self.tag = tag

    def render(self):
        return "".join(p if isinstance(p, str) else p.render() for p in self.parts)

    def replace_parts(self, parts):
        return T(self.kind, *parts, optional=self.optional, tag=self.tag)

    def walk(self):
        yield self
        for p in self.parts:
            if not isinstance(p, str):
                yield from p.walk()


class Seq:
    """Subtrees joined by `sep`; the shrinker may drop items down to `min_items` unless
    `fixed` (an ORDER BY key list must keep covering every column)."""

    __slots__ = ("kind", "items", "sep", "min_items", "fixed")

    def __init__(self, kind, items, sep, min_items=1, fixed=False):
        self.kind = kind
        self.items = list(items)
        self.sep = sep
        self.min_items = min_items
        self.fixed = fixed

    def render(self):
        return self.sep.join(i.render() for i in self.items)

    def replace_items(self, items):
        return Seq(self.kind, items, self.sep, self.min_items, self.fixed)

    def walk(self):
        yield self
        for i in self.items:
            yield from i.walk()


EMPTY = T("empty")


def expr(*parts):
    return T("expr", *parts)


def lit(v):
    return T("expr", cypher_literal(v))


class Query:
    """A generated query: its tree, and facts derived from the tree."""

    def __init__(self, tree):
        self.tree = tree

    def text(self):
        return self.tree.render().strip()

    def ordered(self):
        return any(isinstance(n, T) and n.tag == "order_total" for n in self.tree.walk())

    def bag_columns(self):
        return {n.tag[1] for n in self.tree.walk()
                if isinstance(n, T) and isinstance(n.tag, tuple) and n.tag[0] == "bag"}


# --------------------------------------------------------------------------------------------
# The generator

SCALAR = ("int", "float", "str", "bool", "list", "any")
REGEXES = ["a.*", ".*b", "[ab]+", "A.?", "(?i)a.*", "", ".*", "a|b", "\\d+"]


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.counter = 0

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, seq):
        return self.rng.choice(seq)

    # ---- expressions

    def vars_of(self, scope, *types):
        return [v for v, t in scope.items() if t in types]

    def leaf(self, t, scope):
        """A literal, a variable or a property of the type `t` (or anything, for 'any')."""
        choices = []
        nodes = self.vars_of(scope, "node")
        rels = self.vars_of(scope, "rel")
        same = self.vars_of(scope, t) if t != "any" else self.vars_of(scope, *SCALAR)
        if same:
            choices += [lambda: expr(self.pick(same))] * 3
        nprops = [k for k, kt in NODE_PROPS.items() if t in (kt, "any")]
        if nodes and nprops:
            choices += [lambda: expr(f"{self.pick(nodes)}.{self.pick(nprops)}")] * 4
        rprops = [k for k, kt in REL_PROPS.items() if t in (kt, "any")]
        if rels and rprops:
            choices += [lambda: expr(f"{self.pick(rels)}.{self.pick(rprops)}")] * 2
        choices += [lambda: self.literal(t)] * 2
        return self.pick(choices)()

    def literal(self, t):
        r = self.rng
        if t == "any":
            t = self.pick(["int", "float", "str", "bool", "list", "null"])
        if t == "null":
            return lit(None)
        if t == "int":
            return lit(r.choice([0, 1, 2, 3, -1, 5, 10, 7, r.randint(-20, 40)]))
        if t == "float":
            return lit(r.choice([0.0, 0.5, 1.5, -2.5, 3.25, 1e3, r.uniform(-5, 5).__round__(3)]))
        if t == "str":
            return lit(r.choice(STRINGS))
        if t == "bool":
            return lit(r.random() < 0.5)
        if t == "list":
            n = r.randint(0, 4)
            if self.chance(0.2):
                return lit([r.choice([1, 2.5, "a", None, True]) for _ in range(n)])
            return lit([r.randint(-2, 6) for _ in range(n)])
        raise ValueError(t)

    def e(self, t, scope, depth):
        """An expression of type t (loosely: some productions may fail at runtime)."""
        if depth <= 0 or self.chance(0.3):
            return self.leaf(t, scope)
        d = depth - 1
        g = self.e
        p = self.pick
        nodes = self.vars_of(scope, "node")
        paths = self.vars_of(scope, "path")
        common = [
            lambda: expr("coalesce(", g(t, scope, d), ", ", g(t, scope, d), ")"),
            lambda: expr("CASE WHEN ", g("bool", scope, d), " THEN ", g(t, scope, d),
                         " ELSE ", g(t, scope, d), " END"),
            lambda: expr("CASE ", g("int", scope, d), " WHEN ", self.literal("int"), " THEN ",
                         g(t, scope, d), " WHEN ", self.literal("int"), " THEN ", g(t, scope, d), " END"),
            lambda: expr(p(["head(", "last("]), g("list", scope, d), ")") if t in ("int", "any") else g(t, scope, d),
            lambda: expr(g("list", scope, d), "[", g("int", scope, d), "]") if t in ("int", "any") else g(t, scope, d),
        ]
        if t == "int":
            ops = [
                lambda: expr("(", g("int", scope, d), p([" + ", " - ", " * ", " % "]), g("int", scope, d), ")"),
                lambda: expr("(", g("int", scope, d), " / ", g("int", scope, d), ")"),
                lambda: expr("abs(", g("int", scope, d), ")"),
                lambda: expr("sign(", g(p(["int", "float"]), scope, d), ")"),
                lambda: expr("-", g("int", scope, d)),
                lambda: expr("size(", g(p(["str", "list"]), scope, d), ")"),
                lambda: expr("toInteger(", g(p(["float", "str", "bool", "int", "any"]), scope, d), ")"),
                lambda: expr("toIntegerOrNull(", g("any", scope, d), ")"),
                lambda: expr("reduce(acc = 0, x IN ", g("list", scope, d), " | acc + x)"),
                lambda: expr("size([x IN ", g("list", scope, d), " WHERE x > ", self.literal("int"), "])"),
            ]
            if nodes:
                # A pattern comprehension lists matches in an unspecified order: only its size.
                ops += [lambda: expr("COUNT { (", p(nodes), ")", self.rel_text(), "() }"),
                        lambda: expr("size([(", p(nodes), ")", self.rel_text(), "(y) | y.i])"),
                        lambda: expr("size(labels(", p(nodes), "))"),
                        lambda: expr("size(keys(", p(nodes), "))")]
            if paths:
                ops += [lambda: expr("length(", p(paths), ")")]
        elif t == "float":
            ops = [
                lambda: expr("(", g(p(["float", "int"]), scope, d), p([" + ", " - ", " * ", " / "]),
                             g("float", scope, d), ")"),
                lambda: expr("toFloat(", g(p(["int", "str", "float", "any"]), scope, d), ")"),
                lambda: expr(p(["round", "floor", "ceil", "sqrt", "abs", "exp", "log", "log10", "sin",
                                "cos", "tan", "cot", "asin", "acos", "atan", "degrees", "radians",
                                "haversin", "toFloat"]), "(", g(p(["float", "int"]), scope, d), ")"),
                lambda: expr("atan2(", g("float", scope, d), ", ", g(p(["float", "int"]), scope, d), ")"),
                lambda: expr("toFloatOrNull(", g("any", scope, d), ")"),
                lambda: expr("round(", g("float", scope, d), ", ", lit(self.rng.randint(0, 3)), ")"),
                lambda: expr("(", g("float", scope, d), " ^ ", lit(self.rng.choice([0, 1, 2, 0.5])), ")"),
                lambda: expr(p(["pi()", "e()"])),
            ]
        elif t == "str":
            ops = [
                lambda: expr("(", g("str", scope, d), " + ", g(p(["str", "int", "float"]), scope, d), ")"),
                lambda: expr("toString(", g(p(["int", "float", "bool", "str"]), scope, d), ")"),
                lambda: expr(p(["toUpper", "toLower", "trim", "ltrim", "rtrim", "reverse"]), "(",
                             g("str", scope, d), ")"),
                lambda: expr("substring(", g("str", scope, d), ", ", lit(self.rng.randint(0, 3)), ")"),
                lambda: expr("substring(", g("str", scope, d), ", ", g("int", scope, d), ", ",
                             lit(self.rng.randint(0, 3)), ")"),
                lambda: expr(p(["left", "right"]), "(", g("str", scope, d), ", ", lit(self.rng.randint(0, 4)), ")"),
                lambda: expr("replace(", g("str", scope, d), ", ", self.literal("str"), ", ", self.literal("str"), ")"),
                lambda: expr("head(split(", g("str", scope, d), ", ", lit(self.pick([",", "a", " ", ""])), "))"),
                lambda: expr("toStringOrNull(", g("any", scope, d), ")"),
            ]
            rels = self.vars_of(scope, "rel")
            if rels:
                ops += [lambda: expr("type(", p(rels), ")")]
        elif t == "bool":
            cmp = [" = ", " <> ", " < ", " <= ", " > ", " >= "]
            ops = [
                lambda: expr("(", g(t2 := p(["int", "float", "str", "any"]), scope, d), p(cmp),
                             g(t2 if self.chance(0.8) else p(["int", "str", "float"]), scope, d), ")"),
                lambda: expr("(", g("bool", scope, d), p([" AND ", " OR ", " XOR "]), g("bool", scope, d), ")"),
                lambda: expr("NOT ", g("bool", scope, d)),
                lambda: expr("(", g("any", scope, d), p([" IS NULL", " IS NOT NULL"]), ")"),
                lambda: expr("(", g(p(["int", "any"]), scope, d), " IN ", g("list", scope, d), ")"),
                lambda: expr("(", g("str", scope, d), p([" STARTS WITH ", " ENDS WITH ", " CONTAINS "]),
                             g("str", scope, d), ")"),
                lambda: expr("(", g("str", scope, d), " =~ ", lit(self.pick(REGEXES)), ")"),
                lambda: expr("toBoolean(", g(p(["str", "bool", "int"]), scope, d), ")"),
                lambda: expr("toBooleanOrNull(", g("any", scope, d), ")"),
                lambda: expr("isEmpty(", g(p(["str", "list"]), scope, d), ")"),
                lambda: expr(p(["any", "all", "none", "single"]), "(x IN ", g("list", scope, d),
                             " WHERE x > ", self.literal("int"), ")"),
                lambda: expr("(", g("list", scope, d), " = ", g("list", scope, d), ")"),
            ]
            if nodes:
                ops += [
                    lambda: expr(p(nodes), ":", p(LABELS)),
                    lambda: expr(p(nodes), ":", p(LABELS), "|", p(LABELS)),
                    lambda: expr("EXISTS { (", p(nodes), ")", self.rel_text(), "(", ":" + p(LABELS) if self.chance(0.5) else "", ") }"),
                    lambda: expr(lit(self.pick(list(NODE_PROPS))), " IN keys(", p(nodes), ")"),
                ]
        elif t == "list":
            ops = [
                lambda: expr("range(", g("int", scope, d), ", ", g("int", scope, d), ")"),
                lambda: expr("range(", lit(self.rng.randint(-2, 3)), ", ", lit(self.rng.randint(-2, 8)), ", ",
                             lit(self.pick([1, 2, -1, 3])), ")"),
                lambda: expr("(", g("list", scope, d), " + ", g(p(["list", "int"]), scope, d), ")"),
                lambda: expr(g("list", scope, d), "[", lit(self.rng.randint(-2, 2)), "..",
                             lit(self.rng.randint(-1, 4)), "]"),
                lambda: expr(p(["reverse", "tail"]), "(", g("list", scope, d), ")"),
                lambda: expr("[x IN ", g("list", scope, d), " WHERE x ", p(["> ", "< ", "<> "]),
                             self.literal("int"), " | x ", p(["+ ", "* ", "- "]), self.literal("int"), "]"),
                lambda: expr("[x IN ", g("list", scope, d), " | toString(x)]"),
                lambda: expr("split(", g("str", scope, d), ", ", lit(self.pick([",", "a", " ", "", "b"])), ")"),
                lambda: expr("[", g("int", scope, d), ", ", g("any", scope, d), "]"),
            ]
            if paths:
                ops += [lambda: expr("[x IN nodes(", p(paths), ") | x.i]"),
                        lambda: expr("[x IN relationships(", p(paths), ") | type(x)]")]

        else:  # any
            ops = [lambda: self.e(p(["int", "float", "str", "bool", "list"]), scope, depth),
                   lambda: expr("{a: ", g("any", scope, d), ", b: ", g("int", scope, d), "}.", p(["a", "b"])),
                   lambda: expr("properties(", p(nodes), ")[", lit(p(list(NODE_PROPS))), "]") if nodes
                   else self.leaf("any", scope)]
        return self.pick(ops * 2 + common)()

    def rel_text(self):
        t = f":{self.pick(REL_TYPES)}" if self.chance(0.5) else ""
        body = f"[{t}]" if t else ""
        return self.pick([f"-{body}->", f"<-{body}-", f"-{body}-"])

    # ---- patterns

    def node_pattern(self, var, scope):
        labels = ""
        if self.chance(0.5):
            labels = ":" + self.pick(LABELS)
            if self.chance(0.1):
                labels += "|" + self.pick(LABELS)
        elif self.chance(0.1):
            labels = ":" + self.label_expression()
        props = ""
        if self.chance(0.1):
            k = self.pick(["i", "b", "s"])
            props = " {" + k + ": " + cypher_literal(random_value(self.rng, NODE_PROPS[k])) + "}"
        scope[var] = "node"
        return f"({var}{labels}{props})"

    def label_expression(self):
        """A Neo4j 5 label expression or dynamic label: `A&B`, `!A`, `%`, `$('A')`, ..."""
        a, b = self.pick(LABELS), self.pick(LABELS)
        return self.pick([
            f"{a}&{b}", f"!{a}", "%", f"({a}|{b})&!{self.pick(LABELS)}",
            f"$('{a}')", f"$any(['{a}', '{b}'])", f"$(['{a}', '{b}'])", f"$('{a}')|{b}",
        ])

    def rel_pattern(self, scope, allow_varlen=True):
        types = ""
        if self.chance(0.6):
            types = ":" + self.pick(REL_TYPES)
            if self.chance(0.2):
                types += "|" + self.pick(REL_TYPES)
        elif self.chance(0.1):
            types = ":" + self.pick([
                "%",
                f"$('{self.pick(REL_TYPES)}')",
                f"$any(['{self.pick(REL_TYPES)}', '{self.pick(REL_TYPES)}'])",
                f"$all(['{self.pick(REL_TYPES)}', '{self.pick(REL_TYPES)}'])",
            ])
        var = ""
        length = ""
        if allow_varlen and self.chance(0.15):
            lo = self.pick([0, 1, 1, 2])
            hi = lo + self.pick([0, 1, 2])
            length = f"*{lo}..{hi}"
        elif self.chance(0.7):
            var = self.fresh("r")
            scope[var] = "rel"
        if self.chance(0.1) and not length:
            props = f" {{w: {self.rng.randint(-5, 20)}}}"
        else:
            props = ""
        body = f"[{var}{types}{length}{props}]"
        return self.pick([f"-{body}->", f"<-{body}-", f"-{body}-"])

    def pattern(self, scope, start=None):
        """A path pattern of 0-2 relationships, starting at the bound node `start` if given."""
        parts = []
        if start is not None:
            parts.append(f"({start})")
        else:
            parts.append(self.node_pattern(self.fresh("n"), scope))
        hops = self.pick([0, 1, 1, 1, 2]) if start is None else self.pick([1, 1, 2])
        for _ in range(hops):
            parts.append(self.rel_pattern(scope, allow_varlen=hops == 1))
            parts.append(self.node_pattern(self.fresh("n"), scope))
        text = "".join(parts)
        if hops and self.chance(0.3):
            p = self.fresh("p")
            scope[p] = "path"
            text = f"{p} = {text}"
        return text

    # ---- clauses

    def where(self, scope):
        if not self.chance(0.6):
            return EMPTY
        return T("where", " WHERE ", self.e("bool", scope, 3), optional=True)

    def item(self, scope, alias, allow_bag):
        """One projection item `expr AS alias`, and the type of the new column."""
        r = self.rng.random()
        entity = self.vars_of(scope, "node", "rel", "path")
        if allow_bag and r < 0.08:
            nodes = self.vars_of(scope, "node")
            if nodes:
                fn = self.pick(["labels", "keys"])
                return T("item", expr(f"{fn}({self.pick(nodes)})"), f" AS {alias}", tag=("bag", alias)), "list"
        if entity and r < 0.2:
            v = self.pick(entity)
            if scope[v] == "rel" and self.chance(0.3):
                return T("item", expr(f"{self.pick(['startNode', 'endNode'])}({v})"), f" AS {alias}"), "node"
            if scope[v] != "path" and self.chance(0.2):
                return T("item", expr(f"properties({v})"), f" AS {alias}"), "map"
            return T("item", expr(v), f" AS {alias}"), scope[v]
        if r < 0.25:
            return (T("item", expr("{k: ", self.e("any", scope, 2), ", n: ", self.e("int", scope, 2), "}"),
                      f" AS {alias}"), "map")
        t = self.pick(["int", "int", "float", "str", "bool", "list", "any"])
        return T("item", self.e(t, scope, 3), f" AS {alias}"), t

    def aggregate(self, scope, alias):
        g = self.e
        fn = self.pick(["count", "count*", "sum", "avg", "min", "max", "collect", "stDev", "stDevP",
                        "countd", "collectd", "percentileDisc", "percentileCont"])
        if fn == "count*":
            return T("item", expr("count(*)"), f" AS {alias}"), "int", False
        if fn in ("countd", "collectd"):
            inner = g(self.pick(["int", "str", "any"]), scope, 2)
            name = fn[:-1]
            return (T("item", expr(f"{name}(DISTINCT ", inner, ")"), f" AS {alias}",
                      tag=("bag", alias) if name == "collect" else None),
                    "list" if name == "collect" else "int", name == "collect")
        if fn in ("sum", "avg", "stDev", "stDevP"):
            inner = g(self.pick(["int", "float", "int"]), scope, 2)
            return T("item", expr(f"{fn}(", inner, ")"), f" AS {alias}"), "float", False
        if fn in ("percentileDisc", "percentileCont"):
            inner = g(self.pick(["int", "float"]), scope, 2)
            return (T("item", expr(f"{fn}(", inner, ", ", lit(self.pick([0.0, 0.5, 0.25, 1.0])), ")"),
                      f" AS {alias}"), "float", False)
        if fn == "collect":
            inner = g(self.pick(["int", "str", "any", "float"]), scope, 2)
            return T("item", expr("collect(", inner, ")"), f" AS {alias}", tag=("bag", alias)), "list", True
        inner = g(self.pick(["int", "str", "float", "any"]), scope, 2)
        return T("item", expr(f"{fn}(", inner, ")"), f" AS {alias}"), "any", False

    def projection(self, scope, final):
        """The items of a WITH (final=False) or RETURN, and the new scope with their types.
        Returns (items, new_scope, orderable, bag)."""
        items = []
        new_scope = {}
        orderable = True
        has_bag = False
        aggregating = self.chance(0.3)
        if not final:
            # carry some variables through unchanged
            for v, t in scope.items():
                if self.chance(0.6):
                    items.append(T("item", expr(v), f" AS {v}"))
                    new_scope[v] = t
        n_new = self.pick([1, 1, 2, 3])
        for k in range(n_new):
            alias = self.fresh("c") if not final else f"c{k}"
            # A bag column as a grouping key would group by an unspecified element order.
            it, t = self.item(scope, alias, allow_bag=final and not aggregating)
            if isinstance(it.tag, tuple):
                has_bag = True
            items.append(it)
            new_scope[alias] = t
        if aggregating:
            alias = self.fresh("a") if not final else f"c{n_new}"
            it, t, bag = self.aggregate(scope, alias)
            has_bag = has_bag or bag
            items.append(it)
            # A collected list's order is unspecified: later clauses must not index it.
            new_scope[alias] = "bag" if bag else t
        if any(new_scope[a] in ("node", "rel", "path", "map", "bag") for a in new_scope):
            orderable = False
        if has_bag:
            orderable = False
        return items, new_scope, orderable

    def order_suffix(self, aliases, final):
        """ORDER BY every column (a total order), with optional SKIP / LIMIT."""
        keys = [T("key", a, self.pick(["", "", " DESC"])) for a in aliases]
        self.rng.shuffle(keys)
        parts = [" ORDER BY ", Seq("keys", keys, ", ", fixed=True)]
        if self.chance(0.3):
            parts.append(T("skip", f" SKIP {self.rng.randint(0, 5)}", optional=True))
        if self.chance(0.5):
            parts.append(T("limit", f" LIMIT {self.rng.randint(0, 10)}", optional=True))
        return T("order", *parts, optional=True, tag="order_total" if final else None)

    def clause_tail(self, scope, final):
        """A WITH ... [WHERE] or the final RETURN."""
        items, new_scope, orderable = self.projection(scope, final)
        aliases = [it.parts[-1].removeprefix(" AS ") for it in items]
        head = " RETURN " if final else " WITH "
        # DISTINCT would compare the unspecified element order of a bag column.
        has_bag = any(isinstance(it.tag, tuple) for it in items)
        distinct = "DISTINCT " if self.chance(0.15) and not has_bag else ""
        parts = [head, distinct, Seq("items", items, ", ")]
        if orderable and self.chance(0.45 if final else 0.25):
            parts.append(self.order_suffix(aliases, final))
        clause = T("return" if final else "with", *parts, optional=not final)
        if not final:
            w = self.where(new_scope)
            clause = T("with", clause, w, optional=True)
        return clause, new_scope

    def match_query(self):
        scope = {}
        clauses = []
        if self.chance(0.85):
            pat = self.pattern(scope)
            clauses.append(T("match", "MATCH ", pat, self.where(scope)))
        else:
            x = self.fresh("u")
            clauses.append(T("unwind", "UNWIND ", self.e("list", scope, 2), f" AS {x}"))
            scope[x] = "int"
        nodes = self.vars_of(scope, "node")
        if nodes and self.chance(0.3):
            clauses.append(T("optmatch", " OPTIONAL MATCH ", self.pattern(scope, start=self.pick(nodes)),
                             self.where(scope), optional=True))
        if self.chance(0.35):
            c, scope = self.clause_tail(scope, final=False)
            clauses.append(c)
        if self.chance(0.15):
            x = self.fresh("u")
            clauses.append(T("unwind", " UNWIND ", self.e("list", scope, 2), f" AS {x}", optional=True))
            scope[x] = "any"
        ret, _ = self.clause_tail(scope, final=True)
        clauses.append(ret)
        return T("query", Seq("clauses", clauses, ""))

    def expression_query(self):
        scope = {}
        clauses = []
        if self.chance(0.5):
            x = self.fresh("u")
            clauses.append(T("unwind", "UNWIND ", self.e("list", scope, 2), f" AS {x}", optional=True))
            scope[x] = "int"
        ret, _ = self.clause_tail(scope, final=True)
        clauses.append(ret)
        return T("query", Seq("clauses", clauses, ""))

    def union_query(self):
        n = self.pick([1, 2])
        branches = []
        for _ in range(2):
            scope = {}
            pre = ""
            if self.chance(0.6):
                pat = self.pattern(scope)
                pre = T("match", "MATCH ", pat, self.where(scope), " ")
            items = [T("item", self.e(self.pick(["int", "str", "bool", "float"]), scope, 2), f" AS c{k}")
                     for k in range(n)]
            branches.append(T("branch", pre, "RETURN ", Seq("items", items, ", ", fixed=True)))
        return T("query", branches[0], self.pick([" UNION ", " UNION ALL "]), branches[1])

    def query(self):
        self.counter = 0
        r = self.rng.random()
        if r < 0.65:
            tree = self.match_query()
        elif r < 0.9:
            tree = self.expression_query()
        else:
            tree = self.union_query()
        return Query(tree)
