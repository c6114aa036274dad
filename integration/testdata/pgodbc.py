"""psqlODBC through unixODBC and pyodbc: connect (psqlODBC sends its
multi-statement connect string), count, read the budget. Prints JSON."""
import json
import sys

import pyodbc

host, port, user, password, db, driver = sys.argv[1:7]
conn = pyodbc.connect(
    "DRIVER={%s};SERVER=%s;PORT=%s;UID=%s;PWD=%s;DATABASE=%s;SSLmode=disable"
    % (driver, host, port, user, password, db),
    autocommit=True,
)
cur = conn.cursor()
cur.execute("SET dp_epsilon = 1000")
cur.execute("SELECT COUNT(*) AS n FROM adult")
n = cur.fetchone()[0]
cur.execute("SHOW PRIVACY BUDGET")
cols = [d[0] for d in cur.description]
row = cur.fetchone()
print(json.dumps({"count": float(n), "epsilon_basic": float(row[cols.index("epsilon_basic")])}))
