//! The budget curves: median best DRAM against plans evaluated, one line per splitter, the
//! optimum as a line, as SVG (plotters).

use super::{EXPLAINERS, Repair, Reproduction, mb, repair_name};
use fuselage::search::SearchKind;
use std::path::Path;

impl Reproduction {
    pub(super) fn plot(&self, ri: usize, search: SearchKind, path: &Path) -> Result<(), String> {
        use plotters::prelude::*;
        let e = |x: &dyn std::fmt::Display| x.to_string();
        let row = &self.rows[ri];
        let step = (row.budget / 50).max(1);
        let xs: Vec<u64> = (1..=row.budget / step).map(|i| i * step).collect();
        let splitters: Vec<Repair> = std::iter::once(None).chain(EXPLAINERS.map(Some)).collect();
        let series: Vec<Vec<(f64, f64)>> = splitters
            .iter()
            .map(|sp| {
                xs.iter()
                    .map(|&b| (b as f64, mb(self.median_dram_at(ri, search, *sp, b))))
                    .collect()
            })
            .collect();
        let opt = mb(self.references[ri].optimal_bytes);
        let lo = opt * 0.98;
        let hi = series
            .iter()
            .flat_map(|s| s.iter().skip(s.len() / 10).map(|p| p.1))
            .fold(opt, f64::max)
            * 1.02;
        let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "{}: {} best DRAM vs budget (LBDF, 256 KiB)",
                    row.network,
                    search.table_name()
                ),
                ("sans-serif", 20),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(60)
            .build_cartesian_2d(xs[0] as f64..row.budget as f64, lo..hi)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .x_desc("plans evaluated")
            .y_desc("best DRAM (MB)")
            .draw()
            .map_err(|x| e(&x))?;
        let colours = [BLACK, BLUE, RED, GREEN, MAGENTA];
        for ((sp, pts), colour) in splitters.iter().zip(series).zip(colours) {
            chart
                .draw_series(LineSeries::new(pts, colour))
                .map_err(|x| e(&x))?
                .label(repair_name(*sp))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
        }
        let cyan = RGBColor(0, 150, 150);
        chart
            .draw_series(LineSeries::new(
                vec![(xs[0] as f64, opt), (row.budget as f64, opt)],
                cyan.stroke_width(2),
            ))
            .map_err(|x| e(&x))?
            .label("optimal")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], cyan));
        chart
            .configure_series_labels()
            .background_style(WHITE)
            .border_style(BLACK)
            .draw()
            .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))?;
        Ok(())
    }
}
