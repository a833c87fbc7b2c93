// Prometheus text exposition format 0.0.4, written by hand (docs/design.md section 5). Counters and
// histograms are updated as things happen; gauges that mirror the database (queue depth,
// deliveries by state) are read at scrape time through collectors.

type Labels = Record<string, string>;

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  render(): string[];
}

export class Counter {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    const entry = this.#values.get(key);
    if (entry) entry.value += by;
    else this.#values.set(key, { labels, value: by });
  }
  get(labels: Labels = {}): number {
    return this.#values.get(labelKey(labels))?.value ?? 0;
  }
  samples(name: string): string[] {
    return [...this.#values.values()].map((e) => `${name}${renderLabels(e.labels)} ${e.value}`);
  }
}

export class Histogram {
  readonly #buckets: number[];
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(buckets: number[]) {
    this.#buckets = [...buckets].sort((a, b) => a - b);
  }
  observe(labels: Labels, value: number): void {
    const key = labelKey(labels);
    let s = this.#series.get(key);
    if (!s) {
      s = { labels, counts: this.#buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, s);
    }
    this.#buckets.forEach((b, i) => {
      if (value <= b) s.counts[i]++;
    });
    s.sum += value;
    s.count++;
  }
  samples(name: string): string[] {
    const lines: string[] = [];
    for (const s of this.#series.values()) {
      this.#buckets.forEach((b, i) => lines.push(`${name}_bucket${renderLabels({ ...s.labels, le: String(b) })} ${s.counts[i]}`));
      lines.push(`${name}_bucket${renderLabels({ ...s.labels, le: '+Inf' })} ${s.count}`);
      lines.push(`${name}_sum${renderLabels(s.labels)} ${s.sum}`);
      lines.push(`${name}_count${renderLabels(s.labels)} ${s.count}`);
    }
    return lines;
  }
}

export type GaugeCollector = () => Array<{ labels: Labels; value: number }>;

export class MetricsRegistry {
  readonly #families: Family[] = [];

  counter(name: string, help: string): Counter {
    const c = new Counter();
    this.#add({ name, help, type: 'counter', render: () => c.samples(name) });
    return c;
  }
  histogram(name: string, help: string, buckets: number[]): Histogram {
    const h = new Histogram(buckets);
    this.#add({ name, help, type: 'histogram', render: () => h.samples(name) });
    return h;
  }
  gauge(name: string, help: string, collect: GaugeCollector): void {
    this.#add({
      name,
      help,
      type: 'gauge',
      render: () => collect().map((s) => `${name}${renderLabels(s.labels)} ${s.value}`),
    });
  }
  render(): string {
    const lines: string[] = [];
    for (const f of this.#families) {
      lines.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      lines.push(`# TYPE ${f.name} ${f.type}`);
      lines.push(...f.render());
    }
    return lines.join('\n') + '\n';
  }
  #add(f: Family): void {
    if (this.#families.some((x) => x.name === f.name)) throw new Error(`metric ${f.name} registered twice`);
    this.#families.push(f);
  }
}

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}\u0000${labels[k]}`)
    .join('\u0001');
}

function renderLabels(labels: Labels): string {
  const keys = Object.keys(labels);
  if (keys.length === 0) return '';
  const parts = keys.map((k) => `${k}="${labels[k].replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`);
  return `{${parts.join(',')}}`;
}
