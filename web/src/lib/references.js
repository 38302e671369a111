// @ts-check
// Cross-references (/api/links, /api/backlinks): what links to an address.
import { get, post, query } from "./api.js";

/** @param {string} entity @param {{signal?: AbortSignal}} [o] */
export const backlinks = (entity, { signal } = {}) => get(`/api/backlinks${query({ entity })}`, { signal });
/** @param {string} from @param {string} to @param {string} [type] */
export const link = (from, to, type = "references") => post("/api/links", { from, to, type });
