/** The renditions made of an image asset: the service makes them, the store keeps them, routes name them. */
export const RENDITIONS = [
  { name: "thumb", size: 200, format: "same" },
  { name: "small", size: 640, format: "same" },
  { name: "large", size: 1600, format: "same" },
  { name: "webp", size: 1600, format: "webp" },
] as const;
export const RENDITION_NAMES = RENDITIONS.map((r) => r.name) as [(typeof RENDITIONS)[number]["name"], ...(typeof RENDITIONS)[number]["name"][]];
export type RenditionName = (typeof RENDITION_NAMES)[number];
