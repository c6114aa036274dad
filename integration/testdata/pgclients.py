"""Drive dpproxy's PostgreSQL door through psycopg2, psycopg 3 and SQLAlchemy
1.4 with pandas, as notebooks and BI tools would.

Usage: pgclients.py HOST PORT USER PASSWORD DATABASE. Prints one JSON object.
"""
import json
import sys

host, port, user, password, database = sys.argv[1:6]
out = {}

import psycopg2

conn = psycopg2.connect(host=host, port=port, user=user, password=password, dbname=database, sslmode="disable")
conn.autocommit = True
with conn.cursor() as cur:
    cur.execute("SET dp_epsilon = 100000")
    cur.execute("SELECT COUNT(*) FROM adult")
    out["psycopg2_count"] = cur.fetchone()[0]
    cur.execute("SELECT sex, AVG(age) FROM adult WHERE age > %s GROUP BY sex", (20,))
    out["psycopg2_groups"] = len(cur.fetchall())
    try:
        cur.execute("SELECT * FROM adult")
        out["psycopg2_refused"] = ""
    except psycopg2.Error as e:
        out["psycopg2_refused"] = e.pgcode
conn.close()

import psycopg

with psycopg.connect(host=host, port=port, user=user, password=password, dbname=database, sslmode="disable",
                     autocommit=True) as c:
    c.execute("SET dp_epsilon = 100000")
    # psycopg 3 sends parameters with the extended protocol and describes
    # before binding.
    rows = c.execute("SELECT education, COUNT(*) AS n FROM adult WHERE hours_per_week > %s GROUP BY education",
                     (30,)).fetchall()
    out["psycopg3_groups"] = len(rows)
    for i in range(6):
        c.execute("SELECT SUM(hours_per_week) FROM adult WHERE age > %s", (30 + i,), prepare=True).fetchone()
    out["psycopg3_prepared"] = True
    try:
        c.execute("SELECT age FROM adult")
        out["psycopg3_refused"] = ""
    except psycopg.Error as e:
        out["psycopg3_refused"] = e.sqlstate

import pandas as pd
import sqlalchemy

engine = sqlalchemy.create_engine(
    f"postgresql+psycopg2://{user}:{password}@{host}:{port}/{database}?sslmode=disable")
with engine.connect() as c:
    c.execute(sqlalchemy.text("SET dp_epsilon = 100000"))
    df = pd.read_sql(sqlalchemy.text("SELECT race, COUNT(*) AS n, AVG(hours_per_week) AS hours FROM adult GROUP BY race"), c)
    out["pandas_rows"] = len(df)
    out["pandas_columns"] = list(df.columns)
    out["sqlalchemy_tables"] = sorted(sqlalchemy.inspect(engine).get_table_names())
print(json.dumps(out))
