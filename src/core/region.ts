/**
 * A data-residency region as G11 takes it (`X-Region` on writes, `?region=` on lists): 1-32 letters, digits and `-`,
 * starting with a letter or digit (`eu-west-1`). Compared exactly, as given.
 */
export const REGION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/;
export const REGION_RULE = 'must be 1-32 letters, digits or -, starting with a letter or digit';
