// A first session: create a small graph, query it, look at the schema.
CREATE (ada:Person {name: 'Ada', born: 1815}),
       (bob:Person {name: 'Bob'}),
       (ada)-[:KNOWS {since: 1833}]->(bob);
MATCH (a:Person)-[k:KNOWS]->(b)
RETURN a.name AS from, k.since AS since, b AS to;
MATCH (p:Person) RETURN p.name AS name, p.born AS born ORDER BY name;
:schema
