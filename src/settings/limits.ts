/** A scan's default limits, shared by the collectors that keep them and the settings that name them. */

/** At most this many file records per scan (managed roots included); past it the scan is incomplete. */
export const DEFAULT_MAX_FILES = 20_000;
