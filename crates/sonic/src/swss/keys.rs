//! Database ids, key separators, table names and the Redis key layout of swss-common.
//!
//! Invariants:
//! - A [`TableName`] is never empty and never contains `|`, `:`, whitespace or a Redis glob
//!   character (`*`, `?`, `[`, `]`, `\`), so `<TABLE><sep>*` is always a glob that matches
//!   exactly the keys of that table, and splitting a Redis key at its *first* separator
//!   always recovers the table name.
//! - Object keys are arbitrary strings; they may contain separators (multi-part keys such
//!   as `Ethernet0|3-4`).
//! - All functions here are pure (no I/O).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use super::error::{Result, SwssError};

/// The field/value pairs of one hash, ordered by field name.
pub type Fields = BTreeMap<String, String>;

/// The SONiC Redis databases this crate uses (`common/database_config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Db {
    /// `APPL_DB` (id 0, separator `:`): buffermgrd output, orchagent input.
    Appl,
    /// `CONFIG_DB` (id 4, separator `|`): user configuration.
    Config,
    /// `STATE_DB` (id 6, separator `|`): ASIC parameters, mirrors of pools and profiles.
    State,
    /// `APPL_STATE_DB` (id 14, separator `:`): orchagent's "applied" responses.
    ApplState,
}

impl Db {
    /// All databases, in id order.
    pub const ALL: [Db; 4] = [Db::Appl, Db::Config, Db::State, Db::ApplState];

    /// The numeric Redis database index.
    pub const fn id(self) -> u8 {
        match self {
            Db::Appl => 0,
            Db::Config => 4,
            Db::State => 6,
            Db::ApplState => 14,
        }
    }

    /// The separator between table name and object key in this database's keys.
    pub const fn separator(self) -> char {
        match self {
            Db::Appl | Db::ApplState => ':',
            Db::Config | Db::State => '|',
        }
    }

    /// The SONiC name of the database (`"APPL_DB"`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Db::Appl => "APPL_DB",
            Db::Config => "CONFIG_DB",
            Db::State => "STATE_DB",
            Db::ApplState => "APPL_STATE_DB",
        }
    }

    /// The database with numeric index `id`, if it is one of [`Db::ALL`].
    pub fn from_id(id: u8) -> Option<Db> {
        Db::ALL.into_iter().find(|d| d.id() == id)
    }

    /// The Redis key of object `key` of `table` in this database: `<table><sep><key>`.
    pub fn redis_key(self, table: &TableName, key: &str) -> String {
        let mut s = String::with_capacity(table.as_str().len() + 1 + key.len());
        s.push_str(table.as_str());
        s.push(self.separator());
        s.push_str(key);
        s
    }

    /// The glob matching every key of `table` in this database: `<table><sep>*`.
    pub fn table_pattern(self, table: &TableName) -> String {
        self.redis_key(table, "*")
    }

    /// The keyspace-notification channel pattern of `table`:
    /// `__keyspace@<id>__:<table><sep>*`.
    pub fn keyspace_pattern(self, table: &TableName) -> String {
        format!("{}{}", self.keyspace_prefix(), self.table_pattern(table))
    }

    /// The prefix of every keyspace-notification channel of this database:
    /// `__keyspace@<id>__:`.
    pub fn keyspace_prefix(self) -> String {
        format!("__keyspace@{}__:", self.id())
    }

    /// Splits a Redis key at its first separator into `(table, object key)`.
    ///
    /// Returns [`SwssError::MalformedKey`] if there is no separator, and
    /// [`SwssError::InvalidTableName`] if the part before it is not a valid table name.
    pub fn split_key(self, redis_key: &str) -> Result<(TableName, String)> {
        let (table, key) =
            redis_key
                .split_once(self.separator())
                .ok_or_else(|| SwssError::MalformedKey {
                    db: self,
                    key: redis_key.to_owned(),
                })?;
        Ok((TableName::new(table)?, key.to_owned()))
    }
}

impl fmt::Display for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated table name (`BUFFER_PG`, `BUFFER_PG_TABLE`, …); see the module invariants.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableName(String);

/// Suffix of APPL_DB table names derived from CONFIG_DB ones.
const APPL_SUFFIX: &str = "_TABLE";

impl TableName {
    /// Validates `name`.
    ///
    /// Errors with [`SwssError::InvalidTableName`] if it is empty or contains `|`, `:`,
    /// whitespace or one of `*?[]\`.
    pub fn new(name: impl Into<String>) -> Result<Self> {
        let name = name.into();
        let reason = if name.is_empty() {
            Some("empty")
        } else if name.contains(['|', ':']) {
            Some("contains a key separator")
        } else if name.contains(['*', '?', '[', ']', '\\']) {
            Some("contains a glob character")
        } else if name.chars().any(char::is_whitespace) {
            Some("contains whitespace")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(SwssError::InvalidTableName { name, reason }),
            None => Ok(TableName(name)),
        }
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The APPL_DB name of a CONFIG_DB table: `BUFFER_PG` → `BUFFER_PG_TABLE`.
    pub fn to_appl(&self) -> TableName {
        TableName(format!("{}{APPL_SUFFIX}", self.0))
    }

    /// The CONFIG_DB name of an APPL_DB table: `BUFFER_PG_TABLE` → `BUFFER_PG`.
    ///
    /// Errors with [`SwssError::InvalidTableName`] if the name does not end in `_TABLE` or
    /// is exactly `_TABLE`.
    pub fn to_config(&self) -> Result<TableName> {
        match self.0.strip_suffix(APPL_SUFFIX) {
            Some(base) if !base.is_empty() => Ok(TableName(base.to_owned())),
            _ => Err(SwssError::InvalidTableName {
                name: self.0.clone(),
                reason: "does not end in _TABLE",
            }),
        }
    }

    /// `<TABLE>_KEY_SET`: the ProducerStateTable set of object keys with pending changes.
    pub fn key_set(&self) -> String {
        format!("{}_KEY_SET", self.0)
    }

    /// `<TABLE>_DEL_SET`: the ProducerStateTable set of object keys whose pending change
    /// starts with a delete.
    pub fn del_set(&self) -> String {
        format!("{}_DEL_SET", self.0)
    }

    /// `_<TABLE><sep><key>`: the ProducerStateTable staging hash of one object.
    pub fn staging_key(&self, db: Db, key: &str) -> String {
        format!("_{}", db.redis_key(self, key))
    }

    /// `<TABLE>_CHANNEL@<db id>`: the ProducerStateTable notification channel.
    pub fn channel(&self, db: Db) -> String {
        format!("{}_CHANNEL@{}", self.0, db.id())
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for TableName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl FromStr for TableName {
    type Err = SwssError;

    fn from_str(s: &str) -> Result<Self> {
        TableName::new(s)
    }
}

impl TryFrom<&str> for TableName {
    type Error = SwssError;

    fn try_from(s: &str) -> Result<Self> {
        TableName::new(s)
    }
}

/// Converts a CONFIG_DB object key to its APPL_DB form: every `|` becomes `:`
/// (`Ethernet0|3-4` → `Ethernet0:3-4`).
pub fn config_key_to_appl(key: &str) -> String {
    key.replace('|', ":")
}

/// Converts an APPL_DB object key to its CONFIG_DB form: every `:` becomes `|`.
///
/// Lossy for object keys that legitimately contain `:` (IPv6 addresses); the buffer tables
/// never do.
pub fn appl_key_to_config(key: &str) -> String {
    key.replace(':', "|")
}

/// A table name plus an object key: one row of a table, independent of the database.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableKey {
    /// The table.
    pub table: TableName,
    /// The object key (may contain separators).
    pub key: String,
}

impl TableKey {
    /// A row of `table` with object key `key`.
    pub fn new(table: TableName, key: impl Into<String>) -> Self {
        TableKey {
            table,
            key: key.into(),
        }
    }

    /// Parses a Redis key of database `db` (split at the first separator).
    pub fn parse(db: Db, redis_key: &str) -> Result<Self> {
        let (table, key) = db.split_key(redis_key)?;
        Ok(TableKey { table, key })
    }

    /// The Redis key of this row in database `db`.
    pub fn redis_key(&self, db: Db) -> String {
        db.redis_key(&self.table, &self.key)
    }

    /// The APPL_DB row buffermgrd derives from this CONFIG_DB row:
    /// `BUFFER_PG|Ethernet0|3-4` → `BUFFER_PG_TABLE:Ethernet0:3-4`.
    pub fn config_to_appl(&self) -> TableKey {
        TableKey {
            table: self.table.to_appl(),
            key: config_key_to_appl(&self.key),
        }
    }

    /// The CONFIG_DB row of this APPL_DB row (inverse of [`TableKey::config_to_appl`];
    /// lossy for keys containing `:`, see [`appl_key_to_config`]).
    pub fn appl_to_config(&self) -> Result<TableKey> {
        Ok(TableKey {
            table: self.table.to_config()?,
            key: appl_key_to_config(&self.key),
        })
    }
}

impl fmt::Display for TableKey {
    /// Formats as `<table>|<key>` (the CONFIG_DB style, used only for messages).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}|{}", self.table, self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> TableName {
        TableName::new(s).expect("valid table name")
    }

    #[test]
    fn db_ids_and_separators() {
        assert_eq!(
            Db::ALL.map(|d| (d.id(), d.separator())),
            [(0, ':'), (4, '|'), (6, '|'), (14, ':')]
        );
        for d in Db::ALL {
            assert_eq!(Db::from_id(d.id()), Some(d));
        }
        assert_eq!(Db::from_id(1), None);
    }

    #[test]
    fn table_name_validation() {
        for bad in [
            "", "A|B", "A:B", "A*", "A?", "A[", "A]", "A\\", "A B", "A\tB",
        ] {
            assert!(TableName::new(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(t("BUFFER_PG").as_str(), "BUFFER_PG");
    }

    #[test]
    fn redis_keys_and_split() {
        let pg = t("BUFFER_PG");
        assert_eq!(
            Db::Config.redis_key(&pg, "Ethernet0|3-4"),
            "BUFFER_PG|Ethernet0|3-4"
        );
        assert_eq!(
            Db::Appl.redis_key(&pg.to_appl(), "Ethernet0:3-4"),
            "BUFFER_PG_TABLE:Ethernet0:3-4"
        );
        let (table, key) = Db::Config
            .split_key("BUFFER_PG|Ethernet0|3-4")
            .expect("split");
        assert_eq!(
            (table.as_str(), key.as_str()),
            ("BUFFER_PG", "Ethernet0|3-4")
        );
        assert!(matches!(
            Db::Appl.split_key("BUFFER_PG|x"),
            Err(SwssError::MalformedKey { .. })
        ));
        assert_eq!(
            Db::State.keyspace_pattern(&t("PORT_TABLE")),
            "__keyspace@6__:PORT_TABLE|*"
        );
    }

    #[test]
    fn config_appl_conversion() {
        let row = TableKey::parse(Db::Config, "BUFFER_PG|Ethernet0|3-4").expect("parse");
        let appl = row.config_to_appl();
        assert_eq!(appl.redis_key(Db::Appl), "BUFFER_PG_TABLE:Ethernet0:3-4");
        assert_eq!(appl.appl_to_config().expect("back"), row);
        assert!(t("PORT").to_config().is_err());
        assert!(t("_TABLE").to_config().is_err());
    }

    proptest::proptest! {
        #[test]
        fn config_appl_round_trip(
            table in "[A-Z][A-Z_]{0,20}",
            parts in proptest::collection::vec("[A-Za-z0-9_.-]{0,8}", 1..4),
        ) {
            let key = parts.join("|");
            let row = TableKey::new(t(&table), key.clone());
            let appl = row.config_to_appl();
            proptest::prop_assert!(!appl.key.contains('|'));
            let redis_key = appl.redis_key(Db::Appl);
            let parsed = TableKey::parse(Db::Appl, &redis_key).expect("parse appl key");
            proptest::prop_assert_eq!(&parsed, &appl);
            proptest::prop_assert_eq!(parsed.appl_to_config().expect("to config"), row.clone());
            let config_key = row.redis_key(Db::Config);
            proptest::prop_assert_eq!(TableKey::parse(Db::Config, &config_key).expect("parse"), row);
        }
    }

    #[test]
    fn producer_layout_names() {
        let tb = t("BUFFER_PROFILE_TABLE");
        assert_eq!(tb.key_set(), "BUFFER_PROFILE_TABLE_KEY_SET");
        assert_eq!(tb.del_set(), "BUFFER_PROFILE_TABLE_DEL_SET");
        assert_eq!(tb.staging_key(Db::Appl, "p1"), "_BUFFER_PROFILE_TABLE:p1");
        assert_eq!(tb.channel(Db::Appl), "BUFFER_PROFILE_TABLE_CHANNEL@0");
    }
}
