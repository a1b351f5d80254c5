import HoardPostgres
import Testing

@Suite struct PostgresConnectionTests {
    @Test func aURLWithoutSchemeUserOrDatabaseIsRefusedSayingHowToWriteIt() throws {
        for url in ["http://hoard@127.0.0.1/hoard", "postgres://127.0.0.1:5432/hoard", "postgres://hoard@127.0.0.1:5432/",
                    "postgres://hoard@127.0.0.1/hoard?sslmode=require"] {
            let error = #expect(throws: PostgresCatalogError.self) { try PostgresCatalogDatabase(url: url) }
            #expect(error?.code == .badURL)
            #expect(error?.message.contains("postgres://USER@HOST:PORT/DATABASE") == true, "\(url)")
        }
        let database = try PostgresCatalogDatabase(url: "postgresql://me:secret@db.example:6000/catalog")
        #expect(database.displayURL == "postgresql://me@db.example:6000/catalog")
        #expect(database.configuration.password == "secret")
    }

    @Test func aServerThatIsDownIsAClearError() async throws {
        // Port 1 on loopback: nothing listens there.
        let server = try PostgresCatalogDatabase(url: PostgresFixture.serverURL())
        let down = try PostgresCatalogDatabase(url: PostgresFixture.url(of: server, port: 1))
        let error = await #expect(throws: PostgresCatalogError.self) { try await down.connect() }
        #expect(error?.code == .unreachable)
        #expect(error?.message == "cannot reach PostgreSQL at \(down.displayURL): start it or check --catalog")
    }

    @Test func aMissingDatabaseOrUnknownUserIsAClearError() async throws {
        let server = try PostgresCatalogDatabase(url: PostgresFixture.serverURL())
        let missing = try PostgresCatalogDatabase(url: PostgresFixture.url(of: server, database: "no_such_catalog"))
        let noDatabase = await #expect(throws: PostgresCatalogError.self) { try await missing.connect() }
        #expect(noDatabase?.code == .refused)
        #expect(noDatabase?.message.contains("has no database 'no_such_catalog': create it") == true)

        let stranger = try PostgresCatalogDatabase(url: PostgresFixture.url(of: server, user: "no_such_user"))
        let refused = await #expect(throws: PostgresCatalogError.self) { try await stranger.connect() }
        #expect(refused?.code == .refused)
        #expect(refused?.message.contains("refused the user 'no_such_user'") == true)
    }
}
