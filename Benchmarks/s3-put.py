#!/usr/bin/env python3
"""The S3 floor for an import: the very blobs a local import stored, PUT into a new bucket by a plain client.

Usage: Benchmarks/s3-put.py ENDPOINT BUCKET BLOBS_DIR [--width 16]
BLOBS_DIR is a data directory's blobs/ folder (FileBlobStore's layout: v1/sha256/ab/abcdef…); each file goes to
BUCKET/v1/sha256/ab/abcdef… as Hoard's S3 store names it, signed with SigV4 and its payload's SHA-256, with an
x-amz-meta-touched header, WIDTH at a time on kept-alive connections: what Hoard's import sends when it looks nothing
up, without its staging, hashing and catalog. Credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, region
us-east-1. Every answer must be 200.
"""
import argparse, concurrent.futures, datetime, hashlib, hmac, http.client, os, threading, time, urllib.parse

parser = argparse.ArgumentParser()
parser.add_argument("endpoint")
parser.add_argument("bucket")
parser.add_argument("blobs")
parser.add_argument("--width", type=int, default=16)
args = parser.parse_args()
access, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
endpoint = urllib.parse.urlsplit(args.endpoint)
root = os.path.join(args.blobs, "v1", "sha256")
paths = [os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names]
local = threading.local()


def request(method, path, body=b"", headers=None):
    """Sends one signed request on this thread's connection and returns the status."""
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload = hashlib.sha256(body).hexdigest()
    headers = dict(headers or {}, host=endpoint.netloc, **{"x-amz-date": stamp, "x-amz-content-sha256": payload})
    names = sorted(headers)
    canonical = "\n".join([method, urllib.parse.quote(path), "", *(f"{n}:{headers[n]}" for n in names), "",
                           ";".join(names), payload])
    scope = f"{day}/us-east-1/s3/aws4_request"
    key = b"AWS4" + secret.encode()
    for part in (day, "us-east-1", "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    to_sign = f"AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={access}/{scope}, SignedHeaders={';'.join(names)}, "
                                f"Signature={signature}")
    if not hasattr(local, "connection"):
        local.connection = http.client.HTTPConnection(endpoint.hostname, endpoint.port)
    local.connection.request(method, path, body=body, headers=headers)
    response = local.connection.getresponse()
    response.read()
    return response.status


def put(path):
    with open(path, "rb") as f:
        body = f.read()
    key = "v1/sha256/" + os.path.relpath(path, root)
    status = request("PUT", f"/{args.bucket}/{key}", body, {"x-amz-meta-touched": f"{time.time():.3f}"})
    assert status == 200, (key, status)
    return len(body)


started = time.perf_counter()
assert request("PUT", f"/{args.bucket}") == 200, "could not create the bucket"
with concurrent.futures.ThreadPoolExecutor(args.width) as pool:
    total = sum(pool.map(put, paths))
print(f"{len(paths)} blobs, {total / 2**20:.0f} MiB PUT in {time.perf_counter() - started:.2f} s, {args.width} at a time")
