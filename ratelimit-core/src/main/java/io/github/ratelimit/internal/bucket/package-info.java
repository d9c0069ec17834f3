/**
 * The Bucket4j glue both stores share, not part of the API: a key's state over a Bucket4j bucket
 * ({@code BucketKeyState}), which reads a verbose result into the decision's windows and captures, instead of
 * sleeping, the wait Bucket4j asks for; the short path of a call one rule decides, on which a local bucket records
 * its windows in place ({@code RecordingBucket}) into a verdict made when read ({@code AllowedVerdict}); and the bound
 * on what a charge leaves a window owing, whatever its algorithm ({@code DebtBound}).
 *
 * <p>Uses the API, the store SPI and Bucket4j.
 */
package io.github.ratelimit.internal.bucket;
