import Foundation
import HoardCore
import Testing

@testable import HoardS3

// AWS's published examples from the S3 API reference, "Signature Calculations for the Authorization Header:
// Transferring Payload in a Single Chunk": credentials AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY,
// bucket examplebucket, 24 May 2013 00:00:00 UTC, us-east-1. The expected values are the document's.

private let example = SigV4Signer(
    credentials: S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    region: "us-east-1")
private let exampleDate = Date(timeIntervalSince1970: 1_369_353_600)
private let host = ("host", "examplebucket.s3.amazonaws.com")

/// The signature at the end of an `Authorization` value.
private func signature(of headers: [(name: String, value: String)]) -> String? {
    headers.first { $0.name == "authorization" }?.value.components(separatedBy: "Signature=").last
}

@Test func theTimestampIsTheCompactUTCForm() {
    #expect(SigV4Signer.timestamp(exampleDate) == "20130524T000000Z")
    #expect(SigV4Signer.timestamp(Date(timeIntervalSince1970: 951_782_400 + 3_723)) == "20000229T010203Z")
}

@Test func theGetObjectExampleSignsAsPublished() {
    let request = SigV4Signer.Request(method: "GET", path: "/test.txt", headers: [host, ("range", "bytes=0-9")],
                                      payloadHash: SigV4Signer.emptyPayloadHash)
    let headers = example.sign(request, at: exampleDate)
    #expect(signature(of: headers) == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    #expect(headers.first { $0.name == "authorization" }?.value
        == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
        + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
        + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    // The intermediate steps, as the document prints them.
    var signed = request
    signed.headers += [("x-amz-content-sha256", SigV4Signer.emptyPayloadHash), ("x-amz-date", "20130524T000000Z")]
    #expect(example.canonicalRequest(signed) == """
        GET
        /test.txt

        host:examplebucket.s3.amazonaws.com
        range:bytes=0-9
        x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
        x-amz-date:20130524T000000Z

        host;range;x-amz-content-sha256;x-amz-date
        e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
        """)
    #expect(example.stringToSign(signed, timestamp: "20130524T000000Z") == """
        AWS4-HMAC-SHA256
        20130524T000000Z
        20130524/us-east-1/s3/aws4_request
        7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
        """)
}

@Test func thePutObjectExampleSignsAsPublished() {
    // The key test$file.text has its "$" encoded in the path.
    let payload = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"  // SHA-256 of "Welcome to Amazon S3."
    #expect(BlobHasher.digest(of: Array("Welcome to Amazon S3.".utf8)).hex == payload)
    let path = "/" + SigV4Signer.uriEncode("test$file.text", keepingSlashes: true)
    #expect(path == "/test%24file.text")
    let request = SigV4Signer.Request(
        method: "PUT", path: path,
        headers: [host, ("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY")], payloadHash: payload)
    let headers = example.sign(request, at: exampleDate)
    #expect(signature(of: headers) == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    #expect(headers.first { $0.name == "authorization" }?.value.contains(
        "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,") == true)
    var signed = request
    signed.headers += [("x-amz-content-sha256", payload), ("x-amz-date", "20130524T000000Z")]
    #expect(example.stringToSign(signed, timestamp: "20130524T000000Z").hasSuffix(
        "\n9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d"))
}

@Test func theGetBucketLifecycleExampleSignsAsPublished() {
    // A query parameter without a value is signed as "lifecycle=".
    let request = SigV4Signer.Request(method: "GET", path: "/", query: [("lifecycle", "")], headers: [host],
                                      payloadHash: SigV4Signer.emptyPayloadHash)
    #expect(signature(of: example.sign(request, at: exampleDate)) == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
}

@Test func theListObjectsExampleSignsAsPublished() {
    // Query parameters given out of order are signed sorted.
    let request = SigV4Signer.Request(method: "GET", path: "/", query: [("prefix", "J"), ("max-keys", "2")], headers: [host],
                                      payloadHash: SigV4Signer.emptyPayloadHash)
    #expect(signature(of: example.sign(request, at: exampleDate)) == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
}

@Test func aDifferentSecretOrPayloadGivesADifferentSignature() {
    let request = SigV4Signer.Request(method: "GET", path: "/", query: [("prefix", "J"), ("max-keys", "2")], headers: [host],
                                      payloadHash: SigV4Signer.emptyPayloadHash)
    var wrong = example
    wrong.credentials.secretAccessKey += "x"
    #expect(signature(of: wrong.sign(request, at: exampleDate)) != signature(of: example.sign(request, at: exampleDate)))
    var other = request
    other.payloadHash = String(repeating: "0", count: 64)
    #expect(signature(of: example.sign(other, at: exampleDate)) != signature(of: example.sign(request, at: exampleDate)))
}

@Test func encodingKeepsOnlyTheUnreservedCharacters() {
    #expect(SigV4Signer.uriEncode("A-z_0.9~") == "A-z_0.9~")
    #expect(SigV4Signer.uriEncode("a b+c=d&e") == "a%20b%2Bc%3Dd%26e")
    #expect(SigV4Signer.uriEncode("a/b") == "a%2Fb")
    #expect(SigV4Signer.uriEncode("a/b", keepingSlashes: true) == "a/b")
    #expect(SigV4Signer.uriEncode("é") == "%C3%A9")
    #expect(SigV4Signer.canonicalQuery([("uploadId", "a/b+c=="), ("partNumber", "2"), ("uploads", "")])
        == "partNumber=2&uploadId=a%2Fb%2Bc%3D%3D&uploads=")
}
