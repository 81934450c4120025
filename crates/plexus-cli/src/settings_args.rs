//! The settings flags `plexus serve` and `plexus shell` share (see `plexus::settings`).
//!
//! `--set NAME=VALUE` takes any server setting, repeatable; the named flags are shorthands
//! for the common ones. Both override `plexus.toml` in the database directory, which
//! overrides the defaults; a named flag and a `--set` of the same key: `--set` wins (it is
//! applied last). Every value is checked before the database opens: an unknown key or a bad
//! value stops the command with exit status 2 and a message naming the key.

use std::path::Path;

use plexus::settings::{Settings, Source};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct SettingsArgs {
    /// Any setting as NAME=VALUE (repeatable), e.g. `--set memtable_budget_bytes=512MiB`;
    /// `SHOW SETTINGS` lists them. Overrides plexus.toml in the database directory.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Commit durability: fsync, periodic or none (setting `durability`).
    #[arg(long, value_name = "MODE")]
    pub durability: Option<String>,
    /// The isolation level sessions start with: snapshot or serializable (setting
    /// `default_isolation`).
    #[arg(long, value_name = "LEVEL")]
    pub default_isolation: Option<String>,
    /// Topology memtable budget, e.g. 512MiB (setting `memtable_budget_bytes`).
    #[arg(long, value_name = "SIZE")]
    pub memtable_budget: Option<String>,
    /// Row cache budget, e.g. 1GiB (setting `row_cache_bytes`).
    #[arg(long, value_name = "SIZE")]
    pub row_cache: Option<String>,
    /// Index cache budget, e.g. 256MiB (setting `index_cache_bytes`).
    #[arg(long, value_name = "SIZE")]
    pub index_cache: Option<String>,
}

impl SettingsArgs {
    /// The defaults, `db/plexus.toml`, then these flags.
    pub fn load(&self, db: &Path) -> Result<Settings, plexus::Error> {
        let mut settings = Settings::load(db)?;
        let named = [
            ("durability", &self.durability),
            ("default_isolation", &self.default_isolation),
            ("memtable_budget_bytes", &self.memtable_budget),
            ("row_cache_bytes", &self.row_cache),
            ("index_cache_bytes", &self.index_cache),
        ];
        for (name, value) in named {
            if let Some(value) = value {
                settings.set(name, value, Source::CommandLine)?;
            }
        }
        for assignment in &self.set {
            settings.set_assignment(assignment, Source::CommandLine)?;
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_file_and_set_overrides_flags() {
        let dir = std::env::temp_dir().join(format!("plexus-settings-args-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("plexus.toml"),
            "durability = 'periodic'\nrow_cache_bytes = '2GiB'\n",
        )
        .unwrap();
        let args = SettingsArgs {
            set: vec![
                "memtable_budget_bytes=64MiB".into(),
                "durability=none".into(),
            ],
            durability: Some("fsync".into()),
            default_isolation: Some("serializable".into()),
            ..SettingsArgs::default()
        };
        let settings = args.load(&dir).unwrap();
        let config = settings.config();
        assert_eq!(config.durability, plexus::DurabilityMode::None);
        assert_eq!(config.row_cache_bytes, 2 << 30);
        assert_eq!(config.memtable_budget_bytes, 64 << 20);
        assert_eq!(
            config.default_isolation,
            plexus::IsolationLevel::Serializable
        );
        assert!(matches!(
            settings.source("row_cache_bytes"),
            Some(Source::File(_))
        ));
        let bad = SettingsArgs {
            memtable_budget: Some("lots".into()),
            ..SettingsArgs::default()
        };
        let e = bad.load(&dir).unwrap_err().to_string();
        assert!(
            e.contains("memtable_budget_bytes") && e.contains("lots"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
