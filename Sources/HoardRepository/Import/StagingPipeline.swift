import Dispatch
import Foundation
import HoardCore
import HoardStore

/// Hashes and writes pictures on a second thread while the archive is read on the caller's, so decompression and
/// checksums overlap with SHA-256 and file writes. Memory stays bounded: blocks are copied into a fixed pool of
/// buffers, and the reader waits when every buffer is in flight.
final class StagingPipeline: @unchecked Sendable {
    /// Size of one pooled buffer; larger blocks are split.
    static let bufferSize = 1 << 20
    /// Buffers in flight at most.
    static let depth = 8

    private let area: StagingArea
    private let limits: ImportLimits
    private let queue = DispatchQueue(label: "hoard.staging")
    private let slots = DispatchSemaphore(value: depth)
    private let lock = NSLock()
    private let buffers: [UnsafeMutableRawBufferPointer]
    private var free: [Int]
    // Touched only on `queue`.
    private var writer: BlobWriter?
    /// What the current entry is staged as.
    private var claimed: Claim = .archive
    private var entry: EntryPath?
    // Guarded by `lock`.
    private var failure: (any Error)?
    private var pictures: [StagedPicture] = []
    private var problems: [Problem] = []
    private var archives: [(path: EntryPath, blob: StagedBlob)] = []
    private var documents: [(path: EntryPath, blob: StagedBlob, mediaType: String)] = []

    /// What an entry is staged as: a picture whose name claims a type (its header is checked), an archive inside a
    /// bundle or a pack document (both staged as they are).
    enum Claim {
        case picture(MediaType)
        case archive
        case document(mediaType: String)
    }

    /// Called on the staging queue with each picture whose header passed.
    private let staged: (@Sendable (StagedPicture) -> Void)?

    init(area: StagingArea, limits: ImportLimits, staged: (@Sendable (StagedPicture) -> Void)? = nil) {
        self.area = area
        self.limits = limits
        self.staged = staged
        buffers = (0..<Self.depth).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 64) }
        free = Array(buffers.indices)
    }

    // Queued blocks hold the pipeline, so by the time it deinitialises (possibly on its own queue) none is pending.
    deinit {
        for buffer in buffers { buffer.deallocate() }
    }

    /// Starts an entry staged as `claim`.
    func begin(_ path: EntryPath, claiming mediaType: Claim) throws {
        try rethrowFailure()
        queue.async { [self] in
            guard !hasFailed else { return }
            do {
                writer = try area.makeWriter(keepingPrefix: PicturePrefix.quick)
                claimed = mediaType
                entry = path
            } catch {
                fail(error)
            }
        }
    }

    /// Queues a block of the current picture (copied: the caller's buffer may be reused at once).
    func write(_ block: UnsafeRawBufferPointer) throws {
        guard let base = block.baseAddress else { return }
        var offset = 0
        while offset < block.count {
            let count = min(Self.bufferSize, block.count - offset)
            slots.wait()
            let index = lock.withLock { free.removeLast() }
            buffers[index].baseAddress?.copyMemory(from: base + offset, byteCount: count)
            offset += count
            queue.async { [self] in
                defer {
                    lock.withLock { free.append(index) }
                    slots.signal()
                }
                guard !hasFailed, let writer else { return }
                do {
                    try writer.write(UnsafeRawBufferPointer(rebasing: buffers[index][0..<count]))
                } catch {
                    fail(error)
                }
            }
        }
        try rethrowFailure()
    }

    /// Ends the current picture: finishes its blob and checks its header.
    func end() {
        queue.async { [self] in
            guard !hasFailed, let writer, let entry else { return }
            self.writer = nil
            do {
                let blob = try writer.finish()
                let claimed: MediaType
                switch self.claimed {
                case .picture(let type): claimed = type
                case .archive:
                    lock.withLock { archives.append((entry, blob)) }
                    return
                case .document(let mediaType):
                    lock.withLock { documents.append((entry, blob, mediaType)) }
                    return
                }
                var checked: Result<ImageInfo, Problem> = .failure(Problem(.typeMismatch, "a sound"))
                if !claimed.isAudio { checked = ArchiveScan.checkPicture(of: writer, blob, claimed: claimed, limits: limits) }
                if case .failure = checked, claimed.isAudio || claimed == .webm {
                    // A sound; or a `.webm` that is no video (audio only), whose picture problem stands if it is no sound either.
                    switch ArchiveScan.checkAudio(blob, claimed: claimed, limits: limits) {
                    case .success(let audio):
                        let info = ImageInfo(mediaType: audio.mediaType, width: 0, height: 0)
                        let sound = StagedPicture(path: entry, blob: blob, info: info, audio: audio)
                        lock.withLock { pictures.append(sound) }
                        return
                    case .failure(let problem):
                        if claimed.isAudio { checked = .failure(problem) }
                    }
                }
                switch checked {
                case .success(let info):
                    let picture = StagedPicture(path: entry, blob: blob, info: info)
                    lock.withLock { pictures.append(picture) }
                    staged?(picture)
                case .failure(let problem):
                    lock.withLock { problems.append(Problem(problem.code, problem.message, entry: entry.description)) }
                }
            } catch {
                fail(error)
            }
        }
    }

    /// What the pipeline staged.
    struct Staged {
        var pictures: [StagedPicture]
        var problems: [Problem]
        var archives: [(path: EntryPath, blob: StagedBlob)]
        var documents: [(path: EntryPath, blob: StagedBlob, mediaType: String)]
    }

    /// Waits for every queued write; returns what was staged, or throws the first write failure.
    func finish() throws -> Staged {
        queue.sync {}
        try rethrowFailure()
        return lock.withLock { Staged(pictures: pictures, problems: problems, archives: archives, documents: documents) }
    }

    /// Stops the pipeline after a read failure: skips queued work and waits until none is running, so the staging
    /// area can be discarded without a write racing the removal.
    func cancel() {
        fail(CancellationError())
        queue.sync {}
    }

    private var hasFailed: Bool { lock.withLock { failure != nil } }

    private func fail(_ error: any Error) {
        lock.withLock { if failure == nil { failure = error } }
    }

    private func rethrowFailure() throws {
        if let failure = lock.withLock({ failure }) { throw failure }
    }
}
