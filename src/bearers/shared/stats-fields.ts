import { z } from 'zod';

// The field kinds of a driver's stats schema (DriverModule.stats): what the device reported,
// null until it said, and what the driver counted. Each carries its description into the
// OpenAPI document.

/** A number the device reported, null until it did. */
export const reportedNumber = (what: string) => z.number().nullable().describe(what);
/** A text the device reported, null until it did. */
export const reportedText = (what: string) => z.string().nullable().describe(what);
/** A whole number the driver counted. */
export const counted = (what: string) => z.number().int().describe(what);
