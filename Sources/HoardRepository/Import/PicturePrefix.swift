/// How much of a picture's start the import keeps and reads to check its header.
enum PicturePrefix {
    /// How much of a picture's start a header check may read (JPEG headers may follow large EXIF blocks).
    static let header = 256 << 10
    /// How much of a picture's start is kept in memory while it is staged: enough for the headers of PNG, WebP and
    /// nearly every JPEG; the rest are read back (``ArchiveScan/checkHeader(of:_:claimed:limits:)``).
    static let quick = 16 << 10
}
