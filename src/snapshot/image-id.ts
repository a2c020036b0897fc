/** `sha256:<hex>` whether the engine wrote the prefix (Docker) or not (some Podman answers). */
export const normalImageId = (id: string): string => (/^[0-9a-f]{64}$/.test(id) ? `sha256:${id}` : id);
