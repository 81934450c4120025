package plexus.difftest;

// Neo4j Community, embedded, as the reference side of bench/difftest.
//
// PROTOCOL
// ========
// One JSON object per line on stdin, one answer per line on stdout, in order:
//
//   {"op":"run","query":"MATCH (n) RETURN n.x AS x","params":{}}
//     -> {"ok":true,"columns":["x"],"rows":[[1],[2.5]]}
//     -> {"ok":false,"code":"Neo.ClientError.Statement.SyntaxError","message":"..."}
//   {"op":"version"}  -> {"ok":true,"version":"5.26.31"}
//
// Each "run" is its own transaction, committed when the query succeeds and rolled back
// when it fails, so a graph-building CREATE and a DETACH DELETE reset work as they do over
// Bolt. Log output goes to stderr; stdout carries only answers.
//
// VALUES
// ======
// The encoding is the one difftest.py gives the Plexus side's driver values, so the two can
// be compared as plain JSON:
//   null, booleans, strings          as themselves
//   integers                         JSON integers (Long)
//   floats                           JSON numbers with a fraction or exponent; NaN and the
//                                    infinities as {"$float":"NaN" | "Infinity" | "-Infinity"}
//   lists, property arrays           JSON arrays
//   maps                             JSON objects (keys the query chose; none start with "$")
//   node                             {"$node":{"labels":[sorted],"props":{...}}}
//   relationship                     {"$rel":{"type":T,"props":{...}}}
//   path                             {"$path":[node, {"$rel":..,"fwd":bool}, node, ...]}
//                                    where fwd tells whether the relationship points along
//                                    the path
//   temporal values                  {"$temporal":KIND,"iso":ISO-8601 text}
// Nodes and relationships are compared by content: the two databases number them
// differently.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Array;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetTime;
import java.time.ZonedDateTime;
import java.time.temporal.TemporalAmount;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.Result;
import org.neo4j.graphdb.Transaction;
import org.neo4j.graphdb.Entity;

public final class Neo4jPeer {
    /** A query that runs longer than this is stopped and reported as a timeout. */
    private static final long QUERY_TIMEOUT_MS = 20_000;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        // Neo4j logs through System.out in places; keep the protocol channel clean.
        System.setOut(System.err);
        Path home = Files.createTempDirectory("difftest-neo4j");
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(GraphDatabaseSettings.pagecache_memory, 64L * 1024 * 1024)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown));
        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        out.println("{\"ok\":true,\"ready\":true}");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer;
            try {
                JsonNode request = JSON.readTree(line);
                String op = request.path("op").asText();
                switch (op) {
                    case "run" -> answer = run(db, request.path("query").asText(), paramsOf(request.path("params")));
                    case "version" -> answer = F.objectNode().put("ok", true)
                            .put("version", org.neo4j.kernel.internal.Version.getNeo4jVersion());
                    default -> answer = F.objectNode().put("ok", false).put("code", "Harness.UnknownOp").put("message", op);
                }
            } catch (Exception e) {
                answer = F.objectNode().put("ok", false).put("code", "Harness.Internal").put("message", String.valueOf(e));
            }
            out.println(JSON.writeValueAsString(answer));
        }
        dbms.shutdown();
    }

    private static Map<String, Object> paramsOf(JsonNode params) {
        if (params == null || params.isMissingNode() || params.isNull()) {
            return Collections.emptyMap();
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> map = JSON.convertValue(params, Map.class);
        return map;
    }

    private static ObjectNode run(GraphDatabaseService db, String query, Map<String, Object> params) {
        try (Transaction tx = db.beginTx(QUERY_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            ObjectNode answer = F.objectNode();
            ArrayNode rows = F.arrayNode();
            try (Result result = tx.execute(query, params)) {
                List<String> columns = result.columns();
                ArrayNode cols = answer.putArray("columns");
                columns.forEach(cols::add);
                while (result.hasNext()) {
                    Map<String, Object> row = result.next();
                    ArrayNode r = F.arrayNode();
                    for (String c : columns) {
                        r.add(encode(row.get(c)));
                    }
                    rows.add(r);
                }
            }
            tx.commit();
            answer.put("ok", true);
            answer.set("rows", rows);
            return answer;
        } catch (QueryExecutionException e) {
            return F.objectNode().put("ok", false).put("code", e.getStatusCode()).put("message", e.getMessage());
        } catch (RuntimeException e) {
            String code = statusOf(e);
            return F.objectNode().put("ok", false).put("code", code)
                    .put("message", e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    /** The Neo4j status code of an exception that is not a QueryExecutionException; one
     *  without a status is what the Bolt server reports for it, an UnknownError. */
    private static String statusOf(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof org.neo4j.kernel.api.exceptions.Status.HasStatus s) {
                return s.status().code().serialize();
            }
        }
        return "Neo.DatabaseError.General.UnknownError";
    }

    static JsonNode encode(Object v) {
        if (v == null) {
            return F.nullNode();
        }
        if (v instanceof Boolean b) {
            return F.booleanNode(b);
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return F.numberNode(((Number) v).longValue());
        }
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (Double.isNaN(d)) {
                return F.objectNode().put("$float", "NaN");
            }
            if (Double.isInfinite(d)) {
                return F.objectNode().put("$float", d > 0 ? "Infinity" : "-Infinity");
            }
            return F.numberNode(d);
        }
        if (v instanceof String s) {
            return F.textNode(s);
        }
        if (v instanceof Character c) {
            return F.textNode(String.valueOf(c));
        }
        if (v instanceof Node n) {
            return F.objectNode().set("$node", nodeContent(n));
        }
        if (v instanceof Relationship r) {
            return F.objectNode().set("$rel", relContent(r));
        }
        if (v instanceof org.neo4j.graphdb.Path p) {
            ArrayNode parts = F.arrayNode();
            Node at = p.startNode();
            parts.add(F.objectNode().set("$node", nodeContent(at)));
            Iterator<Relationship> rels = p.relationships().iterator();
            while (rels.hasNext()) {
                Relationship r = rels.next();
                boolean fwd = r.getStartNode().equals(at);
                ObjectNode rel = F.objectNode();
                rel.set("$rel", relContent(r));
                rel.put("fwd", fwd);
                parts.add(rel);
                at = r.getOtherNode(at);
                parts.add(F.objectNode().set("$node", nodeContent(at)));
            }
            return F.objectNode().set("$path", parts);
        }
        if (v instanceof Map<?, ?> m) {
            ObjectNode o = F.objectNode();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                o.set(String.valueOf(e.getKey()), encode(e.getValue()));
            }
            return o;
        }
        if (v instanceof Iterable<?> it) {
            ArrayNode a = F.arrayNode();
            for (Object x : it) {
                a.add(encode(x));
            }
            return a;
        }
        if (v.getClass().isArray()) {
            ArrayNode a = F.arrayNode();
            int n = Array.getLength(v);
            for (int i = 0; i < n; i++) {
                a.add(encode(Array.get(v, i)));
            }
            return a;
        }
        if (v instanceof LocalDate d) {
            return temporal("Date", d.toString());
        }
        if (v instanceof LocalTime t) {
            return temporal("LocalTime", t.toString());
        }
        if (v instanceof OffsetTime t) {
            return temporal("Time", t.toString());
        }
        if (v instanceof LocalDateTime t) {
            return temporal("LocalDateTime", t.toString());
        }
        if (v instanceof ZonedDateTime t) {
            return temporal("DateTime", t.toString());
        }
        if (v instanceof TemporalAmount d) {
            return temporal("Duration", d.toString());
        }
        return F.objectNode().put("$unknown", v.getClass().getName() + ":" + v);
    }

    private static ObjectNode temporal(String kind, String iso) {
        return F.objectNode().put("$temporal", kind).put("iso", iso);
    }

    private static ObjectNode nodeContent(Node n) {
        List<String> labels = new ArrayList<>();
        for (Label l : n.getLabels()) {
            labels.add(l.name());
        }
        Collections.sort(labels);
        ObjectNode o = F.objectNode();
        ArrayNode ls = o.putArray("labels");
        labels.forEach(ls::add);
        o.set("props", propsOf(n));
        return o;
    }

    private static ObjectNode relContent(Relationship r) {
        ObjectNode o = F.objectNode();
        o.put("type", r.getType().name());
        o.set("props", propsOf(r));
        return o;
    }

    private static ObjectNode propsOf(Entity e) {
        ObjectNode o = F.objectNode();
        List<String> keys = new ArrayList<>();
        e.getPropertyKeys().forEach(keys::add);
        Collections.sort(keys);
        for (String k : keys) {
            o.set(k, encode(e.getProperty(k)));
        }
        return o;
    }
}
