//! Everything a reproduction writes to disk.

use super::{Reproduction, Table, repair_name};
use crate::{ReproduceError, Result};
use fuselage::cost::{CostConfig, PlanFile};
use fuselage::search::SearchKind;
use std::path::Path;

/// A search in file names: its table name in lower case without the dash (`rs`, `ls`,
/// `nsgaii`).
fn file_name(search: SearchKind) -> String {
    search.table_name().to_lowercase().replace('-', "")
}

impl Reproduction {
    /// Writes `results.md` into `dir`, and `results/` beside it: `curve_<network>_<search>.svg`,
    /// `runs.json`, `timings.json` and `plans/<row>_<search>_<splitter>_<seed>.json`
    /// (`<splitter>_improved` for the improved method's runs).
    ///
    /// # Errors
    /// [`ReproduceError::Write`] when a file cannot be written; the facade's error when a
    /// row's network or a plan file cannot be made.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let io = |p: &Path, e: &dyn std::fmt::Display| ReproduceError::Write {
            path: p.to_path_buf(),
            why: e.to_string(),
        };
        let sub = dir.join("results");
        let plans = sub.join("plans");
        std::fs::create_dir_all(&plans).map_err(|e| io(&plans, &e))?;
        let md = dir.join("results.md");
        std::fs::write(&md, self.markdown()).map_err(|e| io(&md, &e))?;
        for (name, text) in [
            ("runs.json", self.runs_json()),
            ("timings.json", self.timings_json()),
        ] {
            let p = sub.join(name);
            std::fs::write(&p, text).map_err(|e| io(&p, &e))?;
        }
        for run in &self.runs {
            let row = &self.rows[run.row];
            let g = row.graph()?;
            let model = row.fusion.model(CostConfig::kib(row.buffer_kib)?);
            let file = PlanFile::new(model.as_ref(), &g, &run.plan)?;
            // A Table::Wins row may repeat a paper row's network and model at another β or
            // budget: its plans get their own prefix.
            let prefix = if row.table == Table::Wins {
                format!("wins_{}KiB_", row.buffer_kib)
            } else {
                String::new()
            };
            let p = plans.join(format!(
                "{prefix}{}_{}_{}_{}{}_{}.json",
                row.network,
                row.fusion,
                file_name(run.search),
                repair_name(run.explainer),
                if run.method.is_paper() {
                    ""
                } else {
                    "_improved"
                },
                run.seed
            ));
            std::fs::write(&p, file.to_json()).map_err(|e| io(&p, &e))?;
        }
        for (ri, row) in self.rows_of(Table::II) {
            for &search in &row.searches {
                let p = sub.join(format!("curve_{}_{}.svg", row.network, file_name(search)));
                self.plot(ri, search, &p).map_err(|e| io(&p, &e))?;
            }
        }
        Ok(())
    }
}
