//! SVG plots of the program's curves (the latency–energy front of `optimize --front-svg`),
//! drawn with plotters into a string so that the file is written whole
//! ([`crate::files::write`]). The buffer sweep has its own chart, the report's
//! ([`fuselage::report::chart`]).

use anyhow::anyhow;

/// One plot: a title, axis names, and a series of points drawn as markers joined by a line.
pub struct Plot<'a> {
    title: &'a str,
    x: &'a str,
    y: &'a str,
    points: Vec<(f64, f64)>,
}

impl<'a> Plot<'a> {
    /// An empty plot.
    pub fn new(title: &'a str, x: &'a str, y: &'a str) -> Self {
        Plot {
            title,
            x,
            y,
            points: Vec::new(),
        }
    }

    /// The points, in x order.
    pub fn points(mut self, points: &[(f64, f64)]) -> Self {
        self.points = points.to_vec();
        self.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        self
    }

    /// The SVG text.
    pub fn to_svg(&self) -> anyhow::Result<String> {
        use plotters::prelude::*;
        let e = |x: &dyn std::fmt::Display| anyhow!("drawing the plot: {x}");
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in &self.points {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        if self.points.is_empty() {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        let pad = |lo: f64, hi: f64| {
            let d = ((hi - lo) * 0.05).max(hi.abs() * 0.01).max(1e-12);
            (lo - d, hi + d)
        };
        let ((x0, x1), (y0, y1)) = (pad(x0, x1), pad(y0, y1));
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
            root.fill(&WHITE).map_err(|x| e(&x))?;
            let mut chart = ChartBuilder::on(&root)
                .caption(self.title, ("sans-serif", 20))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|x| e(&x))?;
            chart
                .configure_mesh()
                .x_desc(self.x)
                .y_desc(self.y)
                .draw()
                .map_err(|x| e(&x))?;
            chart
                .draw_series(LineSeries::new(self.points.clone(), BLUE))
                .map_err(|x| e(&x))?;
            chart
                .draw_series(
                    self.points
                        .iter()
                        .map(|&p| Circle::new(p, 4, BLUE.filled())),
                )
                .map_err(|x| e(&x))?;
            root.present().map_err(|x| e(&x))?;
        }
        Ok(svg)
    }
}
