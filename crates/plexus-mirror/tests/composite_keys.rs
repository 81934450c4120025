//! Composite keys end to end: a vertex table keyed by two columns, edge tables whose
//! endpoints are two columns each (a link table keyed by its four endpoint columns, and a
//! table with its own two-column key), a list property gathered by a two-column parent key —
//! through the initial copy and the stream: inserts, property updates, key changes, endpoint
//! moves, deletes, a dangling reference held pending until its vertex arrives.

mod common;

use std::sync::Arc;

use common::{catch_up, cluster_with};
use plexus::{Config, Database, Params};
use plexus_mirror::{Mirror, MirrorOptions, load_mapping};

const SCHEMA: &str = "
    CREATE TABLE warehouse (region text, code int, name text, PRIMARY KEY (region, code));
    CREATE TABLE warehouse_tag (region text, code int, tag text, PRIMARY KEY (region, code, tag));
    CREATE TABLE route (a_region text, a_code int, b_region text, b_code int, km int,
                        PRIMARY KEY (a_region, a_code, b_region, b_code),
                        FOREIGN KEY (a_region, a_code) REFERENCES warehouse ON UPDATE CASCADE,
                        FOREIGN KEY (b_region, b_code) REFERENCES warehouse ON UPDATE CASCADE);
    CREATE TABLE movement (day date, seq int, src_region text, src_code int,
                           dst_region text, dst_code int, kg int, PRIMARY KEY (day, seq));
    INSERT INTO warehouse VALUES ('north', 1, 'Oslo'), ('north', 2, 'Bergen'),
                                 ('south', 1, 'Rome');
    INSERT INTO warehouse_tag VALUES ('north', 1, 'cold'), ('north', 1, 'big'),
                                     ('south', 1, 'warm');
    INSERT INTO route VALUES ('north', 1, 'north', 2, 460), ('north', 2, 'south', 1, 2400);
    INSERT INTO movement VALUES ('2026-01-05', 1, 'north', 1, 'south', 1, 30),
                                ('2026-01-05', 2, 'south', 1, 'east', 9, 12);";

const MAPPING: &str = "
CREATE PROPERTY GRAPH depots
  VERTEX TABLES (
    warehouse KEY (region, code) LABEL Warehouse PROPERTIES (region, code, name)
      PROPERTY tags LIST FROM warehouse_tag (tag) KEY (region, code) ORDER BY tag
  )
  EDGE TABLES (
    route
      SOURCE KEY (a_region, a_code) REFERENCES warehouse (region, code)
      DESTINATION KEY (b_region, b_code) REFERENCES warehouse (region, code)
      LABEL ROUTE PROPERTIES (km),
    movement KEY (day, seq)
      SOURCE KEY (src_region, src_code) REFERENCES warehouse (region, code)
      DESTINATION KEY (dst_region, dst_code) REFERENCES warehouse (region, code)
      LABEL MOVED PROPERTIES (kg)
  );";

/// Touches a mapped table so the mirror has a position to catch up to.
const TOUCH: &str = "INSERT INTO warehouse VALUES ('sync', 0, 'sync');
                     DELETE FROM warehouse WHERE region = 'sync'";

/// The rows of `query` as text, sorted.
fn rows(db: &Database, query: &str) -> Vec<String> {
    let mut conn = db.connect();
    let result = conn
        .execute(query, &Params::new())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut rows = result.rendered_rows();
    rows.sort();
    rows
}

fn warehouses(db: &Database) -> Vec<String> {
    rows(
        db,
        "MATCH (w:Warehouse) RETURN w.region_code, w.name, w.tags",
    )
}

fn edges(db: &Database) -> Vec<String> {
    rows(
        db,
        "MATCH (a:Warehouse)-[r]->(b:Warehouse)
         RETURN type(r), a.region_code, b.region_code, r.km, r.day_seq, r.kg",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn composite_keys_through_copy_and_stream() {
    let (cluster, client) = cluster_with(SCHEMA).await;
    let mapping = load_mapping(&cluster.conninfo(), MAPPING, "depots.sql")
        .await
        .expect("mapping");
    let db = Arc::new(Database::open_in_memory(Config::default()).expect("database"));
    let mut mirror = Mirror::start(db.clone(), MirrorOptions::new(&cluster.conninfo(), mapping))
        .await
        .expect("start");

    // the copy: the composite key is one list property; lists found by their two-column key
    assert_eq!(
        warehouses(&db),
        [
            "['north', 1] | 'Oslo' | ['big', 'cold']",
            "['north', 2] | 'Bergen' | null",
            "['south', 1] | 'Rome' | ['warm']",
        ]
    );
    assert_eq!(
        edges(&db),
        [
            "'MOVED' | ['north', 1] | ['south', 1] | null | ['2026-01-05', 1] | 30",
            "'ROUTE' | ['north', 1] | ['north', 2] | 460 | null | null",
            "'ROUTE' | ['north', 2] | ['south', 1] | 2400 | null | null",
        ]
    );
    let status = mirror.status();
    assert_eq!(status.pending, 1, "{status:?}");
    assert!(
        status.pending_listed[0].contains("warehouse (region, code)=(east, 9)"),
        "{:?}",
        status.pending_listed
    );

    // the stream: the dangling movement's warehouse arrives; a key changes (its edges stay
    // attached, and the routes' cascaded updates find them); a movement moves to another
    // destination; a route is deleted; a tag moves
    client
        .batch_execute(
            "INSERT INTO warehouse VALUES ('east', 9, 'Vienna');
             UPDATE warehouse SET code = 3, name = 'Bergen Port' WHERE region = 'north' AND code = 2;
             UPDATE movement SET dst_region = 'north', dst_code = 1, kg = 31
               WHERE day = '2026-01-05' AND seq = 1;
             DELETE FROM route WHERE a_region = 'north' AND a_code = 3;
             UPDATE warehouse_tag SET code = 3 WHERE region = 'north' AND tag = 'big';
             INSERT INTO movement VALUES ('2026-01-06', 1, 'east', 9, 'north', 3, 5);",
        )
        .await
        .expect("stream writes");
    catch_up(&mut mirror, &client, TOUCH).await;
    assert_eq!(mirror.status().pending, 0, "{:?}", mirror.status());
    assert_eq!(
        warehouses(&db),
        [
            "['east', 9] | 'Vienna' | null",
            "['north', 1] | 'Oslo' | ['cold']",
            "['north', 3] | 'Bergen Port' | ['big']",
            "['south', 1] | 'Rome' | ['warm']",
        ]
    );
    assert_eq!(
        edges(&db),
        [
            "'MOVED' | ['east', 9] | ['north', 3] | null | ['2026-01-06', 1] | 5",
            "'MOVED' | ['north', 1] | ['north', 1] | null | ['2026-01-05', 1] | 31",
            "'MOVED' | ['south', 1] | ['east', 9] | null | ['2026-01-05', 2] | 12",
            "'ROUTE' | ['north', 1] | ['north', 3] | 460 | null | null",
        ]
    );

    // a warehouse deleted with the movements referencing it
    client
        .batch_execute(
            "DELETE FROM movement WHERE src_region = 'east' OR dst_region = 'east';
             DELETE FROM warehouse WHERE region = 'east' AND code = 9",
        )
        .await
        .expect("delete");
    catch_up(&mut mirror, &client, TOUCH).await;
    assert_eq!(
        rows(&db, "MATCH ()-[r:MOVED]->() RETURN r.day_seq"),
        ["['2026-01-05', 1]"]
    );
    assert_eq!(rows(&db, "MATCH (w:Warehouse) RETURN count(w)"), ["3"]);
    mirror.stop().await.expect("stop");
}
