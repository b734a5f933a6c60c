//! `fuselage hw list` and `fuselage hw show NAME|FILE`: the accelerator presets and files.

use crate::common::{describe_config, kib};
use clap::{Args, Subcommand};
use fuselage::cost::Accelerator;
use fuselage::ir::escape;

/// Arguments of `fuselage hw`.
#[derive(Debug, Args)]
pub struct HwCmd {
    #[command(subcommand)]
    what: HwWhat,
}

#[derive(Debug, Subcommand)]
enum HwWhat {
    /// One preset per line: its name, buffer, precisions, compute and bandwidth.
    List,
    /// A preset or an accelerator file in full, with its sources.
    Show {
        /// A preset name (`fuselage hw list`) or a TOML file.
        name: String,
        /// Print the TOML (a preset as shipped; a file as read back) instead of a summary.
        #[arg(long)]
        toml: bool,
    },
}

fn summary(hw: &Accelerator) -> String {
    let peak = hw.peak_macs_per_cycle.map_or_else(
        || "compute not modelled".to_string(),
        |p| format!("{p} MACs/cycle"),
    );
    format!(
        "{} · {:.0} MHz · {} · {:.2} GB/s DRAM",
        describe_config(&hw.config),
        hw.clock_hz as f64 / 1e6,
        peak,
        hw.dram_bytes_per_second as f64 / 1e9
    )
}

pub fn run(a: HwCmd) -> anyhow::Result<()> {
    match a.what {
        HwWhat::List => {
            for hw in Accelerator::presets() {
                outln!("{:<14}{}", hw.name, summary(&hw))?;
            }
        }
        HwWhat::Show { name, toml } => {
            // A file is read once, through the guarded reader, for the summary and --toml.
            let (hw, text) = crate::files::hardware_and_text("<NAME>", &name)?;
            if toml {
                outln!("{}", text.trim_end())?;
                return Ok(());
            }
            outln!("{}", escape(&hw.name))?;
            outln!("  {}", escape(&hw.description))?;
            outln!(
                "  buffer       {} ({:.1} KiB in all)",
                describe_config(&hw.config),
                kib(hw.config.buffer_bytes())
            )?;
            outln!("  clock        {:.1} MHz", hw.clock_hz as f64 / 1e6)?;
            outln!(
                "  compute      {}",
                hw.peak_macs_per_cycle.map_or_else(
                    || "not modelled".to_string(),
                    |p| format!("{p} MACs per cycle")
                )
            )?;
            outln!(
                "  DRAM         {:.3} GB/s",
                hw.dram_bytes_per_second as f64 / 1e9
            )?;
            let e = &hw.energy;
            outln!(
                "  energy       DRAM {} pJ/B, buffer {} pJ/B, MAC {} pJ",
                e.dram_fj_per_byte as f64 / 1e3,
                e.buffer_fj_per_byte as f64 / 1e3,
                e.mac_fj as f64 / 1e3
            )?;
            outln!("  source       {}", escape(&hw.source))?;
        }
    }
    Ok(())
}
