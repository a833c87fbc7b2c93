import { z } from 'zod';

// GeoJSON (RFC 7946: WGS84, longitude first) for the positions answers of the bridge and the hub,
// so both give a map the same FeatureCollection: one Point per node, the item's other fields as
// the feature's properties.

/** [longitude, latitude], with the altitude third when it is known. */
export function coordinates(lon: number, lat: number, alt: number | null): number[] {
  return alt === null ? [lon, lat] : [lon, lat, alt];
}

const Point = z.object({ type: z.literal('Point'), coordinates: z.array(z.number()).describe('[longitude, latitude] or [longitude, latitude, altitude_m]') });

interface Located {
  latitude: number;
  longitude: number;
  altitude_m: number | null;
}

/** The schema of a FeatureCollection of `item`s: the position fields become the geometry. */
export function pointCollectionSchema<T extends z.ZodObject<{ latitude: z.ZodNumber; longitude: z.ZodNumber; altitude_m: z.ZodNullable<z.ZodNumber> }>>(item: T) {
  return z.object({
    type: z.literal('FeatureCollection'),
    features: z.array(z.object({ type: z.literal('Feature'), id: z.string(), geometry: Point, properties: item.omit({ latitude: true, longitude: true, altitude_m: true }) })),
  });
}

/** One Point feature per item, `id` naming the feature. */
export function pointCollection<T extends Located>(items: T[], id: (item: T) => string) {
  return {
    type: 'FeatureCollection' as const,
    features: items.map((item) => {
      const { latitude, longitude, altitude_m, ...properties } = item;
      return { type: 'Feature' as const, id: id(item), geometry: { type: 'Point' as const, coordinates: coordinates(longitude, latitude, altitude_m) }, properties };
    }),
  };
}
