// The first error stops a script: nothing after it runs, and the exit status is 1.
CREATE (:Kept);
MATCH (n:Kept)
RETURN n.name AS name,
       count(n) AS c +;
CREATE (:NeverCreated);
