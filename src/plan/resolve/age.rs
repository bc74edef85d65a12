//! Aging: `--age` on every setup, a plan's `aged_twins`, and the room an aged setup leaves.

use crate::Error;
use crate::plan::SetupSpec;
use crate::plan::overrides::Overrides;
use crate::plan::params;
use crate::scratch::TargetKind;

/// A plan's `aged_twins`: beside every fresh setup its twin `NAME-aged` (same options, aged),
/// so fresh and aged run side by side whatever `--fs` chose. `--age` (every setup aged)
/// replaces it.
pub(super) fn add_aged_twins(
    twins: Option<&str>,
    args: &Overrides,
    setups: &mut Vec<SetupSpec>,
) -> crate::Result<()> {
    let (Some(text), None) = (twins, &args.age) else {
        return Ok(());
    };
    let age = crate::fs::setup::age::parse(text, "aged_twins")?;
    let fresh: Vec<SetupSpec> = setups.iter().filter(|s| s.age.is_none()).cloned().collect();
    for f in fresh {
        let mut t = f.clone();
        t.name = format!("{}-aged", f.name);
        t.age = Some(age);
        t.raw.insert(
            crate::fs::setup::variant_keys::AGE_KEY.to_string(),
            text.to_string(),
        );
        if !setups.iter().any(|s| s.name == t.name) {
            setups.push(t);
        }
    }
    params::SETUPS.check_u64(setups.len() as u64).map_err(|e| {
        Error::invalid(
            "--fs",
            format!("{e}: {} setups with their aged twins", setups.len()),
        )
    })?;
    Ok(())
}

/// `--age` on every setup without its own `age=`; aging refused on a `--dir` target (it
/// would fill and fragment a filesystem fsbench did not create).
pub(super) fn apply_age(
    args: &Overrides,
    setups: &mut [SetupSpec],
    target: &TargetKind,
    capacity: Option<u64>,
) -> crate::Result<()> {
    if let Some(text) = &args.age {
        let age = crate::fs::setup::age::parse(text, "--age")?;
        for s in setups.iter_mut().filter(|s| s.age.is_none()) {
            s.age = Some(age);
            s.raw.insert(
                crate::fs::setup::variant_keys::AGE_KEY.to_string(),
                text.clone(),
            );
        }
    }
    for a in setups.iter_mut().filter_map(|s| s.age.as_mut()) {
        a.capacity = capacity.unwrap_or(0);
    }
    if let TargetKind::Dir { .. } = target
        && setups.iter().any(|s| s.age.is_some())
    {
        return Err(Error::invalid(
            "--age",
            "cannot age a --dir target: aging fills and fragments the filesystem it runs on; use an image or --device",
        ));
    }
    Ok(())
}

/// An aged setup keeps only `100 − FULLNESS` % of the target free: refuse a data file that
/// would take more than half of it (the layout would hit ENOSPC in every round).
pub(super) fn check_aged_room(
    setups: &[SetupSpec],
    file_size: u64,
    capacity: Option<u64>,
) -> crate::Result<()> {
    let Some(cap) = capacity else {
        return Ok(());
    };
    for s in setups {
        let Some(a) = &s.age else { continue };
        let free = (cap as f64 * (100.0 - a.fullness) / 100.0) as u64;
        if file_size > free / 2 {
            return Err(Error::invalid(
                "--age",
                format!(
                    "setup {:?}: aging to {}% full leaves about {} free on the {} target, too little for the {} data file (at most half of it); use a larger --image-size, a lower FULLNESS (age={}:{}:50%) or a smaller --file-size",
                    s.name,
                    a.fullness,
                    crate::units::format_size(free),
                    crate::units::format_size(cap),
                    crate::units::format_size(file_size),
                    a.profile.name(),
                    a.amount
                ),
            ));
        }
    }
    Ok(())
}
