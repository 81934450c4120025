// Statements between BEGIN and COMMIT share one transaction; the prompt shows it.
BEGIN;
CREATE (:Account {id: 1, balance: 100});
CREATE (:Account {id: 2, balance: 0});
COMMIT;
BEGIN;
MATCH (a:Account {id: 1}) SET a.balance = a.balance - 30;
ROLLBACK;
MATCH (a:Account) RETURN a.id AS id, a.balance AS balance ORDER BY id;
