:help
:nonsense
RETURN 'not reached' AS x;
