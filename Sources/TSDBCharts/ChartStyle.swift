/// The charts' colours, light and dark, as CSS inside the SVG (no external stylesheet or font).
enum ChartStyle {
    static let seriesCount = 6

    struct Palette {
        var background, text, muted, grid, axis, accent, band: String
        var series: [String]
    }

    static let light = Palette(
        background: "#ffffff", text: "#1f2328", muted: "#57606a", grid: "#e6e8eb", axis: "#8c959f",
        accent: "#d1242f", band: "#f4b6b9",
        series: ["#2f6fdb", "#1b3a8c", "#8a5cf5", "#f0883e", "#9aa6b2", "#3fb950"])
    static let dark = Palette(
        background: "#0d1117", text: "#e6edf3", muted: "#8d96a0", grid: "#262c36", axis: "#59636e",
        accent: "#ff7b72", band: "#6e2b2f",
        series: ["#58a6ff", "#a5c8ff", "#bc8cff", "#ffa657", "#6e7681", "#56d364"])

    static func rules(_ p: Palette) -> String {
        var css =
            ".background{fill:\(p.background)}text{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;"
            + "fill:\(p.text)}.title{font-size:16px;font-weight:600}.subtitle,.unit,.legend{font-size:12px;"
            + "fill:\(p.muted)}.tick{font-size:11px;fill:\(p.muted)}.empty{font-size:14px;fill:\(p.muted)}"
            + ".grid{stroke:\(p.grid);stroke-width:1}.axis{stroke:\(p.axis);stroke-width:1}"
            + ".band{fill:\(p.band);stroke:none}.line{fill:none;stroke:\(p.accent);stroke-width:1.5;"
            + "stroke-linejoin:round}.dot{fill:\(p.accent)}.swatch{stroke:none}"
            + ".total{stroke:\(p.text);stroke-width:2}"
        for (k, color) in p.series.enumerated() { css += ".s\(k){fill:\(color)}" }
        return css
    }

    static func css(_ theme: Chart.Theme) -> String {
        switch theme {
        case .light: rules(light)
        case .dark: rules(dark)
        case .auto: rules(light) + "@media (prefers-color-scheme:dark){" + rules(dark) + "}"
        }
    }
}
