//! Flag value types more than one command shares. They live apart from the commands so that no
//! two command modules import each other (`run` flattens `sysbench`'s flags; both take on/off).

use clap::ValueEnum;

/// `on` or `off`, for flags whose absence means "the default for this case".
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq)]
pub enum OnOff {
    On,
    Off,
}
