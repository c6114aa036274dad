"""Drive dpproxy through pymysql and SQLAlchemy, as an analyst's notebook would.

Usage: clients.py HOST PORT USER PASSWORD DATABASE. Prints one JSON object.
"""
import json
import sys

import pymysql
import sqlalchemy
from sqlalchemy import text

host, port, user, password, database = sys.argv[1:6]
port = int(port)
out = {}

conn = pymysql.connect(host=host, port=port, user=user, password=password, database=database)
with conn.cursor() as cur:
    cur.execute("SET dp_epsilon = 100000")
    cur.execute("SELECT COUNT(*) FROM adult")
    out["pymysql_count"] = cur.fetchone()[0]
    cur.execute("SELECT sex, AVG(age) FROM adult WHERE age > %s GROUP BY sex", (20,))
    out["pymysql_groups"] = len(cur.fetchall())
    try:
        cur.execute("SELECT * FROM adult")
        out["pymysql_refused"] = 0
    except pymysql.err.MySQLError as e:
        out["pymysql_refused"] = e.args[0]
conn.close()

engine = sqlalchemy.create_engine(
    f"mysql+pymysql://{user}:{password}@{host}:{port}/{database}")
with engine.connect() as c:
    c.execute(text("SET dp_epsilon = 100000"))
    rows = c.execute(text("SELECT education, COUNT(*) AS n FROM adult GROUP BY education ORDER BY n DESC")).fetchall()
    out["sqlalchemy_groups"] = len(rows)
    r = c.execute(text("SELECT SUM(hours_per_week) AS h FROM adult WHERE sex = :sex"), {"sex": "Female"}).fetchone()
    out["sqlalchemy_prepared"] = float(r[0])
    out["sqlalchemy_tables"] = sqlalchemy.inspect(engine).get_table_names()
print(json.dumps(out))
