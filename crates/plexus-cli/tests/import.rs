//! `plexus import` driven as users drive it: the built binary on files in a temporary
//! directory, the result read back through `plexus::Database`.
//!
//! Every bad-input case runs against a database that already holds an earlier import and
//! checks that the failed import changed nothing (and that a new database directory is not
//! left behind).

use std::path::Path;
use std::process::Output;

use plexus::{Config, Database, Params};

mod common;
use common::{Scratch, plexus, text};

/// `LABEL=file` with each file's full path in `dir`.
fn arg(dir: &Scratch, prefix: &str, files: &[&str]) -> String {
    let files: Vec<String> = files
        .iter()
        .map(|f| dir.path(f).display().to_string())
        .collect();
    format!("{prefix}={}", files.join(","))
}

fn import_args(db: &Path, args: &[String]) -> Vec<String> {
    let mut all = vec!["import".to_string(), db.display().to_string()];
    all.extend_from_slice(args);
    all
}

/// Runs `plexus import <db> <args>`, again while the database is briefly held by a child
/// another test thread forked (see [`open`]).
fn import(db: &Path, args: &[String]) -> Output {
    for _ in 0..100 {
        let out = plexus(&import_args(db, args));
        if !text(&out.stderr).contains("is in use by another process") {
            return out;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("{} stays locked", db.display());
}

/// Opens the database in `db`. Tests run on threads of one process and spawn `plexus`: a
/// child forked while this process holds a database's LOCK keeps the lock until it execs, so
/// a reopen right after closing may briefly find it held.
fn open(db: &Path) -> Database {
    for _ in 0..100 {
        match Database::open(db, Config::default()) {
            Err(plexus::Error::AlreadyOpen { .. }) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            opened => return opened.expect("open the imported database"),
        }
    }
    panic!("{} stays locked", db.display());
}

/// Rows of `query` on the database in `db`, each value printed as Cypher prints it.
fn query(db: &Path, query: &str) -> Vec<Vec<String>> {
    let db = open(db);
    let result = db
        .connect()
        .execute(query, &Params::new())
        .expect("run the query");
    result
        .rows
        .iter()
        .map(|row| row.iter().map(|v| result.render(v)).collect())
        .collect()
}

fn counts(db: &Path) -> (String, String) {
    let rows = query(
        db,
        "CALL { MATCH (n) RETURN count(n) AS nodes } \
         CALL { MATCH ()-[r]->() RETURN count(r) AS rels } RETURN nodes, rels",
    );
    (rows[0][0].clone(), rows[0][1].clone())
}

const PEOPLE: &str = "\
personId:ID(Person),name,age:int,born:date,tags:string[],score:float,admin:boolean,:LABEL
1,Ada,36,1815-12-10,math;poetry,9.5,true,Author
2,Bob,,,\"\",,false,
3,\"Cy, the third\",7,2017-01-02,x,,,Author;Kid
";
const COMPANY_HEADER: &str = ":ID(Company)|name\n";
const COMPANIES: &str = "1|Acme\n2|Initech\n";
const WORKS_AT: &str = ":START_ID(Person)|:END_ID(Company)|since:int\n1|1|1833\n2|2|2001\n";
const KNOWS: &str =
    ":START_ID(Person),:END_ID(Person),:TYPE,weight:double\n1,2,KNOWS,0.5\n2,3,LIKES,\n3,1,,1\n";

fn sample(name: &str) -> Scratch {
    Scratch::new("import-test", name).with(&[
        ("people.csv", PEOPLE),
        ("company-header.csv", COMPANY_HEADER),
        ("companies.csv", COMPANIES),
        ("works.csv", WORKS_AT),
        ("knows.csv", KNOWS),
    ])
}

/// Imports the sample into `db` (a fresh directory).
fn import_sample(files: &Scratch, db: &Path) -> Output {
    let out = import(
        db,
        &[
            "--nodes".into(),
            arg(files, "Person", &["people.csv"]),
            "--relationships".into(),
            arg(files, "FRIEND", &["knows.csv"]),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

#[test]
fn a_neo4j_admin_style_import_with_id_groups_labels_types_and_arrays() {
    let files = sample("admin");
    let db = files.path("db");
    // Id groups: Person 1 and Company 1 are different nodes; the header of the companies is a
    // file of its own; '|' separates fields in those files.
    let out = import(
        &db,
        &[
            "--nodes".into(),
            arg(
                &files,
                "Company:Org",
                &["company-header.csv", "companies.csv"],
            ),
            "--nodes".into(),
            arg(&files, "Person", &["people.csv"]),
            "--relationships".into(),
            arg(&files, "FRIEND", &["knows.csv"]),
        ],
    );
    // ',' is the default: the '|' files read as one field each, so this import must fail on
    // the company header, before anything is written.
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("company-header.csv:1:1: header column 1:"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !db.exists(),
        "a failed import into a new directory leaves none"
    );

    let out = import_sample(&files, &db);
    let summary = text(&out.stdout);
    assert!(
        summary.starts_with("imported 3 nodes, 3 relationships, skipped 0 bad rows in "),
        "{summary}"
    );
    // One plain progress line per file when stderr is not a terminal.
    let progress = text(&out.stderr);
    assert!(progress.contains("people.csv: 3 rows, 0 bad"), "{progress}");
    assert!(progress.contains("knows.csv: 3 rows, 0 bad"), "{progress}");

    let out = import(
        &db,
        &[
            "--delimiter".into(),
            "|".into(),
            "--nodes".into(),
            arg(
                &files,
                "Company:Org",
                &["company-header.csv", "companies.csv"],
            ),
            "--relationships".into(),
            arg(&files, "WORKS_AT", &["works.csv"]),
        ],
    );
    // The works file names Person ids, which this import has not read: unknown endpoints.
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(
            "works.csv:2:1: :START_ID(Person): unknown start node id \"1\" in id group Person"
        ),
        "{}",
        text(&out.stderr)
    );
    let out = import(
        &db,
        &[
            "--delimiter".into(),
            "|".into(),
            "--nodes".into(),
            arg(
                &files,
                "Company:Org",
                &["company-header.csv", "companies.csv"],
            ),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    let people = query(
        &db,
        "MATCH (p:Person) RETURN p.personId, p.name, labels(p), p.age, p.born, p.tags, p.score, \
         p.admin ORDER BY p.personId",
    );
    assert_eq!(
        people,
        [
            [
                "'1'",
                "'Ada'",
                "['Author', 'Person']",
                "36",
                "'1815-12-10'",
                "['math', 'poetry']",
                "9.5",
                "true"
            ],
            [
                "'2'",
                "'Bob'",
                "['Person']",
                "null",
                "null",
                "[]",
                "null",
                "false"
            ],
            [
                "'3'",
                "'Cy, the third'",
                "['Author', 'Kid', 'Person']",
                "7",
                "'2017-01-02'",
                "['x']",
                "null",
                "null"
            ],
        ]
        .map(|row| row.map(str::to_string).to_vec())
    );
    let dates = query(
        &db,
        "MATCH (p:Person {name: 'Ada'}) RETURN p.born = date('1815-12-10'), p.born.year",
    );
    assert_eq!(dates, [["true", "1815"]]);
    let rels = query(
        &db,
        "MATCH (a)-[r]->(b) RETURN a.name, type(r), r.weight, b.name ORDER BY a.name",
    );
    assert_eq!(
        rels,
        [
            ["'Ada'", "'KNOWS'", "0.5", "'Bob'"],
            ["'Bob'", "'LIKES'", "null", "'Cy, the third'"],
            ["'Cy, the third'", "'FRIEND'", "1.0", "'Ada'"],
        ]
        .map(|row| row.map(str::to_string).to_vec())
    );
    let companies = query(&db, "MATCH (c:Company:Org) RETURN c.name ORDER BY c.name");
    assert_eq!(companies, [["'Acme'"], ["'Initech'"]]);
    assert_eq!(counts(&db), ("5".into(), "3".into()));
}

/// Each bad input fails with file, line and column, and changes nothing.
#[test]
fn bad_rows_fail_the_import_and_change_nothing() {
    let files = sample("bad").with(&[
        ("malformed.csv", "id:ID(Person),name\n10,Dee\n11\n"),
        ("wrong-type.csv", "id:ID(Person),age:int\n10,1\n11,eleven\n"),
        (
            "dangling.csv",
            ":START_ID(Person),:END_ID(Person)\n1,2\n2,99\n",
        ),
        (
            "duplicate.csv",
            "personId:ID(Person),name\n10,Dee\n1,Again\n",
        ),
        (
            "truncated.csv",
            "id:ID(Person),name,age:int\n10,Dee,4\n11,Eve",
        ),
        ("emp.csv", ":ID(E),id:int,name\na,7,Ann\nb,8,Ben\nc,7,Cat\n"),
    ]);
    let db = files.path("db");
    import_sample(&files, &db);
    let before = counts(&db);
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "--nodes",
            "Person",
            "malformed.csv",
            "malformed.csv:3: malformed row: 1 fields where the header has 2",
        ),
        (
            "--nodes",
            "Person",
            "wrong-type.csv",
            "wrong-type.csv:3:2: age:int: cannot read \"eleven\" as an integer",
        ),
        (
            "--relationships",
            "KNOWS",
            "dangling.csv",
            "dangling.csv:3:2: :END_ID(Person): unknown end node id \"99\" in id group Person",
        ),
        (
            "--nodes",
            "Person",
            "duplicate.csv",
            "duplicate.csv:3:1: personId:ID(Person): duplicate node id \"1\" in id group Person",
        ),
        (
            "--nodes",
            "Person",
            "truncated.csv",
            "truncated.csv:3: malformed row: 2 fields where the header has 3",
        ),
    ];
    // A declared table: the bulk load itself rejects the duplicate primary key.
    query(
        &db,
        "CREATE NODE TABLE Emp(id INT64 PRIMARY KEY, name STRING)",
    );
    let out = import(&db, &["--nodes".into(), arg(&files, "Emp", &["emp.csv"])]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("emp.csv:4: ") && stderr.contains("duplicate primary key 7"),
        "{stderr}"
    );
    assert_eq!(counts(&db), before);
    for &(flag, name, file, expected) in cases {
        let mut args = vec![
            "--nodes".to_string(),
            arg(&files, "Person", &["people.csv"]),
        ];
        args.push(flag.into());
        args.push(arg(&files, name, &[file]));
        let out = import(&db, &args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {stderr}");
        assert!(stderr.contains(expected), "{file}: {stderr}");
        assert!(stderr.contains("nothing was imported"), "{file}: {stderr}");
        assert_eq!(counts(&db), before, "{file} changed the database");
    }
}

#[test]
fn skip_bad_rows_counts_them_and_lists_them_in_the_report() {
    let files = sample("skip").with(&[
        (
            "people2.csv",
            "id:ID(P),name,age:int\n1,Ann,1\n2,Ben\n3,Cat,x\n1,Dup,2\n4,Dan,4\n",
        ),
        ("rels.csv", ":START_ID(P),:END_ID(P)\n1,4\n4,99\n"),
    ]);
    let nodes = arg(&files, "Person", &["people2.csv"]);
    let rels = arg(&files, "KNOWS", &["rels.csv"]);
    let expected = [
        "people2.csv:3: malformed row: 2 fields where the header has 3",
        "people2.csv:4:3: age:int: cannot read \"x\" as an integer",
        "people2.csv:5:1: id:ID(P): duplicate node id \"1\" in id group P",
        "rels.csv:3:2: :END_ID(P): unknown end node id \"99\" in id group P",
    ];

    // Three may be skipped: the fourth fails the import, which leaves no database.
    let db = files.path("db3");
    let report = files.path("three.txt");
    let out = import(
        &db,
        &[
            "--nodes".into(),
            nodes.clone(),
            "--relationships".into(),
            rels.clone(),
            "--skip-bad-rows".into(),
            "3".into(),
            "--bad-rows-report".into(),
            report.display().to_string(),
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("more than 3 bad rows"), "{stderr}");
    assert!(stderr.contains(expected[3]), "{stderr}");
    assert!(!db.exists());
    assert_eq!(std::fs::read_to_string(&report).unwrap().lines().count(), 4);

    // Four may be skipped: the import succeeds; the default report is beside the database.
    let db = files.path("db4");
    let out = import(
        &db,
        &[
            "--nodes".into(),
            nodes,
            "--relationships".into(),
            rels,
            "--skip-bad-rows".into(),
            "4".into(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let default_report = files.path("db4.import-report.txt");
    let summary = text(&out.stdout);
    assert!(
        summary.starts_with("imported 2 nodes, 1 relationships, skipped 4 bad rows in ")
            && summary.contains(&format!("(listed in {})", default_report.display())),
        "{summary}"
    );
    let listed = std::fs::read_to_string(&default_report).unwrap();
    let listed: Vec<&str> = listed.lines().collect();
    assert_eq!(listed.len(), 4);
    for (line, expected) in listed.iter().zip(expected) {
        assert!(line.ends_with(expected), "{line} / {expected}");
    }
    assert_eq!(
        query(&db, "MATCH (a:Person)-[:KNOWS]->(b) RETURN a.name, b.name"),
        [["'Ann'", "'Dan'"]]
    );
}

#[test]
fn missing_and_truncated_files_and_a_database_in_use() {
    let files = sample("missing");
    let db = files.path("db");
    import_sample(&files, &db);
    let before = counts(&db);

    let out = import(
        &db,
        &[
            "--nodes".into(),
            arg(&files, "Person", &["people.csv", "absent.csv"]),
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("absent.csv: cannot read the file: No such file"),
        "{stderr}"
    );
    assert_eq!(counts(&db), before);

    // A gzip file cut in the middle: the rows before the cut were read, then the import fails.
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"id:ID(G),n:int\n").unwrap();
    for i in 0..20_000 {
        writeln!(gz, "{i},{}", i * 7 % 1000).unwrap();
    }
    let bytes = gz.finish().unwrap();
    std::fs::write(files.path("cut.csv.gz"), &bytes[..bytes.len() / 2]).unwrap();
    let out = import(&db, &["--nodes".into(), arg(&files, "G", &["cut.csv.gz"])]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cut.csv.gz: the file is truncated or corrupt"),
        "{stderr}"
    );
    assert_eq!(counts(&db), before);
    // The whole file imports.
    std::fs::write(files.path("whole.csv.gz"), &bytes).unwrap();
    let out = import(
        &db,
        &["--nodes".into(), arg(&files, "G", &["whole.csv.gz"])],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        query(&db, "MATCH (g:G) RETURN count(g), sum(g.n)"),
        [["20000", "9990000"]]
    );

    // Another process has the database open.
    let open = open(&db);
    let out = plexus(&import_args(
        &db,
        &["--nodes".into(), arg(&files, "Person", &["people.csv"])],
    ));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the database {} is in use by another process",
            db.display()
        )),
        "{stderr}"
    );
    drop(open);
    assert!(db.exists(), "an existing database is never removed");
}
