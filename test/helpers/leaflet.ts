import { launchChromium } from './chromium.ts';

// Opens GeoJSON in Leaflet (node_modules/leaflet) in headless Chromium, as a map page would: each
// object becomes one L.geoJSON layer, the map fits them all. Answers how many markers and lines
// the map drew and every page error and console error seen meanwhile.

export async function drawInLeaflet(geojson: unknown[]): Promise<{ markers: number; lines: number; errors: string[] }> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    await page.setContent('<!doctype html><html><body><div id="map" style="width:600px;height:400px"></div></body></html>');
    await page.addScriptTag({ path: 'node_modules/leaflet/dist/leaflet.js' });
    const drawn = await page.evaluate((layers) => {
      const L = (globalThis as any).L;
      const map = L.map('map');
      let bounds: any = null;
      for (const g of layers) {
        const b = L.geoJSON(g).addTo(map).getBounds();
        bounds = bounds ? bounds.extend(b) : b;
      }
      map.fitBounds(bounds);
      let markers = 0;
      let lines = 0;
      map.eachLayer((layer: any) => {
        if (layer instanceof L.Marker) markers++;
        else if (layer instanceof L.Polyline) lines++;
      });
      return { markers, lines };
    }, geojson);
    return { ...drawn, errors };
  } finally {
    await browser.close();
  }
}
