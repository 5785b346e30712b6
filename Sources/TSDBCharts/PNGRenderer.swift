import TSDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Rasterises a chart's SVG to PNG with librsvg and cairo, loaded with `dlopen` only when a PNG
/// is asked for: nothing else in tsdb links them, so queries start no slower and a machine
/// without them still does everything else (Debian: `librsvg2-2`).
public enum PNGRenderer {
    /// The PNG `tEXt` chunk that marks a file as written by `tsdb plot` (so a re-run may replace it).
    public static let softwareText = "Software\u{0}" + Chart.generatorMark

    private typealias NewFromData =
        @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<OpaquePointer?>?) -> OpaquePointer?
    private typealias RenderDocument =
        @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeRawPointer?, UnsafeMutablePointer<OpaquePointer?>?) ->
        Int32
    private typealias SurfaceCreate = @convention(c) (Int32, Int32, Int32) -> OpaquePointer?
    private typealias Create = @convention(c) (OpaquePointer?) -> OpaquePointer?
    private typealias Scale = @convention(c) (OpaquePointer?, Double, Double) -> Void
    private typealias WritePNG = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    private typealias Release = @convention(c) (OpaquePointer?) -> Void

    /// Renders `svg` (of `width` × `height` CSS pixels) at `scale` into PNG bytes.
    public static func render(svg: String, width: Double, height: Double, scale: Double = 2) throws(TSDBError)
        -> [UInt8]
    {
        let rsvg = try library("librsvg-2.so.2")
        let cairo = try library("libcairo.so.2")
        let gobject = try library("libgobject-2.0.so.0")
        let newFromData: NewFromData = try symbol(rsvg, "rsvg_handle_new_from_data")
        let renderDocument: RenderDocument = try symbol(rsvg, "rsvg_handle_render_document")
        let surfaceCreate: SurfaceCreate = try symbol(cairo, "cairo_image_surface_create")
        let create: Create = try symbol(cairo, "cairo_create")
        let scaleBy: Scale = try symbol(cairo, "cairo_scale")
        let writePNG: WritePNG = try symbol(cairo, "cairo_surface_write_to_png")
        let destroy: Release = try symbol(cairo, "cairo_destroy")
        let surfaceDestroy: Release = try symbol(cairo, "cairo_surface_destroy")
        let unref: Release = try symbol(gobject, "g_object_unref")

        let bytes = Array(svg.utf8)
        guard let handle = bytes.withUnsafeBufferPointer({ newFromData($0.baseAddress, $0.count, nil) }) else {
            throw TSDBError.invalidInput("librsvg could not read the chart's SVG")
        }
        defer { unref(handle) }
        let pixelsWide = Int32((width * scale).rounded())
        let pixelsHigh = Int32((height * scale).rounded())
        guard let surface = surfaceCreate(0, pixelsWide, pixelsHigh) else {  // CAIRO_FORMAT_ARGB32
            throw TSDBError.io("cairo could not create a \(pixelsWide)×\(pixelsHigh) image")
        }
        defer { surfaceDestroy(surface) }
        let context = create(surface)
        defer { destroy(context) }
        scaleBy(context, scale, scale)
        let viewport = [0, 0, width, height]  // RsvgRectangle: x, y, width, height
        guard viewport.withUnsafeBytes({ renderDocument(handle, context, $0.baseAddress, nil) }) != 0 else {
            throw TSDBError.invalidInput("librsvg could not render the chart")
        }
        // cairo writes PNG to a path only: a private temporary file, read back and removed.
        var template = Array("/tmp/tsdb-plot-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw TSDBError.io("cannot create a temporary file for the PNG") }
        close(fd)
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(temporary) }
        guard writePNG(surface, temporary) == 0, let png = FileSystem.contents(of: temporary) else {
            throw TSDBError.io("cairo could not write the PNG", path: temporary)
        }
        return marked(png)
    }

    /// `png` with a `tEXt` chunk naming tsdb plot after its header chunk.
    static func marked(_ png: [UInt8]) -> [UInt8] {
        let headerEnd = 8 + 4 + 4 + 13 + 4  // signature, IHDR length, type, data, CRC
        guard png.count > headerEnd else { return png }
        let data = Array(softwareText.utf8)
        var chunk: [UInt8] = []
        withUnsafeBytes(of: UInt32(data.count).bigEndian) { chunk += $0 }
        let typed = Array("tEXt".utf8) + data
        chunk += typed
        withUnsafeBytes(of: crc32(typed).bigEndian) { chunk += $0 }
        return Array(png[..<headerEnd]) + chunk + Array(png[headerEnd...])
    }

    /// CRC-32 (ISO-HDLC, as PNG and zlib use), bit by bit: chunks here are a few bytes.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func library(_ name: String) throws(TSDBError) -> UnsafeMutableRawPointer {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            throw TSDBError.notFound(
                "PNG output needs \(name) (Debian: apt-get install librsvg2-2); SVG output works without it")
        }
        return handle
    }

    private static func symbol<F>(_ library: UnsafeMutableRawPointer, _ name: String) throws(TSDBError) -> F {
        guard let address = dlsym(library, name) else {
            throw TSDBError.notFound("\(name) is missing from the installed librsvg/cairo (librsvg 2.46 or later)")
        }
        return unsafeBitCast(address, to: F.self)
    }
}
