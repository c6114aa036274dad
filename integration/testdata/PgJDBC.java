// Drives dpproxy's PostgreSQL door through pgjdbc (Debian's
// libpostgresql-jdbc-java): a PreparedStatement executed more than 5 times
// (pgjdbc then switches to a named server-side statement and binary
// results), metadata, and a refusal with its SQLSTATE. Prints key=value.
import java.sql.*;

public class PgJDBC {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/" + args[4] + "?sslmode=disable";
        try (Connection c = DriverManager.getConnection(url, args[2], args[3])) {
            try (Statement s = c.createStatement()) {
                s.execute("SET dp_epsilon = 100000");
            }
            try (PreparedStatement p = c.prepareStatement("SELECT COUNT(*), AVG(age) FROM adult WHERE age > ?")) {
                for (int i = 0; i < 8; i++) {
                    p.setInt(1, 30 + i);
                    try (ResultSet rs = p.executeQuery()) {
                        rs.next();
                        System.out.println("prepared" + i + "=" + rs.getLong(1) + "," + rs.getDouble(2));
                    }
                }
            }
            DatabaseMetaData md = c.getMetaData();
            try (ResultSet rs = md.getTables(null, null, "%", new String[] {"TABLE"})) {
                StringBuilder b = new StringBuilder();
                while (rs.next()) b.append(rs.getString("TABLE_NAME")).append(',');
                System.out.println("tables=" + b);
            }
            try (ResultSet rs = md.getColumns(null, null, "adult", "%")) {
                int n = 0;
                while (rs.next()) n++;
                System.out.println("columns=" + n);
            }
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT * FROM adult");
                System.out.println("refused=");
            } catch (SQLException e) {
                System.out.println("refused=" + e.getSQLState());
            }
        }
    }
}
