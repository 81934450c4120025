// A ';' inside strings, backquoted names and comments does not end a statement.
RETURN 'semi;colon' AS single, "double;quoted" AS double; RETURN 'it\'s; fine' AS escaped;
WITH {`odd;key`: 1} AS m /* a block; comment */
RETURN m.`odd;key` AS value, // a line; comment
       [1, 'a', null] AS list;
:rows 1
UNWIND range(1, 3) AS i RETURN i;
