import Foundation
import HoardStore
import Testing

@testable import HoardS3

private let credentials = S3Credentials(accessKeyID: "key", secretAccessKey: "secret")

@Test func aLocationGivesItsBucketAndPrefixAndDefaultsTheRest() throws {
    let plain = try S3Configuration(location: "s3://my-bucket", credentials: credentials, stagingDirectory: "/tmp/s")
    #expect(plain.bucket == "my-bucket")
    #expect(plain.prefix == "")
    #expect(plain.region == "us-east-1")
    #expect(plain.endpoint.absoluteString == "https://s3.us-east-1.amazonaws.com")
    let prefixed = try S3Configuration(location: "s3://assets.example/hoard//blobs/", endpoint: "http://127.0.0.1:9000", region: "eu-west-3",
                                       credentials: credentials, stagingDirectory: "/tmp/s")
    #expect(prefixed.bucket == "assets.example")
    #expect(prefixed.prefix == "hoard/blobs")
    #expect(prefixed.region == "eu-west-3")
    #expect(prefixed.endpointBase == "http://127.0.0.1:9000")
}

@Test(arguments: ["my-bucket", "s3:/x", "s3://", "s3://ab", "s3://Upper", "s3://-dash", "s3://under_score", "s3://a..b",
                  "s3://" + String(repeating: "a", count: 64)])
func aLocationThatIsNotAnS3BucketIsRefusedClearly(_ location: String) {
    #expect(throws: BlobStoreError.self) { try S3Configuration(location: location, credentials: credentials, stagingDirectory: "/tmp/s") }
}

@Test func aBadEndpointOrRegionIsRefused() {
    #expect(throws: BlobStoreError.self) {
        try S3Configuration(location: "s3://bucket", endpoint: "ftp://host", credentials: credentials, stagingDirectory: "/tmp/s")
    }
    #expect(throws: BlobStoreError.self) {
        try S3Configuration(location: "s3://bucket", region: "us east", credentials: credentials, stagingDirectory: "/tmp/s")
    }
}

@Test func credentialsComeFromTheAWSVariables() {
    #expect(S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"]) == credentials.with("k", "s"))
    #expect(S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "k"]) == nil)
    #expect(S3Credentials.fromEnvironment(["AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": ""]) == nil)
}

@Test func partsBelowS3sMinimumAreRefused() throws {
    var configuration = try S3Configuration(location: "s3://bucket", credentials: credentials, stagingDirectory: "/tmp/s")
    configuration.partSize = 1 << 20
    #expect(throws: BlobStoreError.self) { try S3BlobStore(configuration: configuration) }
}

extension S3Credentials {
    fileprivate func with(_ key: String, _ secret: String) -> S3Credentials {
        S3Credentials(accessKeyID: key, secretAccessKey: secret)
    }
}
