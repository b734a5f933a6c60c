//! SVG plots of the program's curves (the latency–energy front, the buffer sweep), drawn with
//! plotters into a string so that the file is written whole ([`crate::common::write_atomic`]).

use anyhow::anyhow;

/// One plot: a title, axis names, and a series of points drawn as markers joined by a line
/// (`steps` draws a step curve instead, for a quantity constant between breakpoints).
pub struct Plot<'a> {
    title: &'a str,
    x: &'a str,
    y: &'a str,
    points: Vec<(f64, f64)>,
    steps: bool,
    log_x: bool,
}

impl<'a> Plot<'a> {
    /// An empty plot.
    pub fn new(title: &'a str, x: &'a str, y: &'a str) -> Self {
        Plot {
            title,
            x,
            y,
            points: Vec::new(),
            steps: false,
            log_x: false,
        }
    }

    /// The points, in x order.
    pub fn points(mut self, points: &[(f64, f64)]) -> Self {
        self.points = points.to_vec();
        self.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        self
    }

    /// Draws a step curve (each value holds until the next point) on a log-2 x axis.
    pub fn steps(mut self) -> Self {
        self.steps = true;
        self.log_x = true;
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
        let (y0, y1) = pad(y0, y1);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
            root.fill(&WHITE).map_err(|x| e(&x))?;
            let mut builder = ChartBuilder::on(&root);
            builder
                .caption(self.title, ("sans-serif", 20))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(70);
            let colour = BLUE;
            if self.log_x {
                let mut chart = builder
                    .build_cartesian_2d((x0.max(1.0)..x1.max(2.0)).log_scale().base(2.0), y0..y1)
                    .map_err(|x| e(&x))?;
                chart
                    .configure_mesh()
                    .x_desc(self.x)
                    .y_desc(self.y)
                    .draw()
                    .map_err(|x| e(&x))?;
                let mut line = Vec::new();
                for (i, &(x, y)) in self.points.iter().enumerate() {
                    line.push((x, y));
                    if let Some(&(next, _)) = self.points.get(i + 1) {
                        line.push((next, y));
                    }
                }
                chart
                    .draw_series(LineSeries::new(line, colour.stroke_width(2)))
                    .map_err(|x| e(&x))?;
                chart
                    .draw_series(
                        self.points
                            .iter()
                            .map(|&p| Circle::new(p, 3, colour.filled())),
                    )
                    .map_err(|x| e(&x))?;
            } else {
                let (x0, x1) = pad(x0, x1);
                let mut chart = builder
                    .build_cartesian_2d(x0..x1, y0..y1)
                    .map_err(|x| e(&x))?;
                chart
                    .configure_mesh()
                    .x_desc(self.x)
                    .y_desc(self.y)
                    .draw()
                    .map_err(|x| e(&x))?;
                chart
                    .draw_series(LineSeries::new(self.points.clone(), colour))
                    .map_err(|x| e(&x))?;
                chart
                    .draw_series(
                        self.points
                            .iter()
                            .map(|&p| Circle::new(p, 4, colour.filled())),
                    )
                    .map_err(|x| e(&x))?;
            }
            root.present().map_err(|x| e(&x))?;
        }
        Ok(svg)
    }
}
