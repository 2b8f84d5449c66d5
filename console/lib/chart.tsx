/** Small time-series charts (uPlot: ~50 KB, canvas, no dependencies). */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

export interface Series {
  label: string;
  values: (number | null)[];
}

const COLORS = ["#2f6fb0", "#c0392b", "#2e8b57", "#b8860b", "#7b4fa0"];

/** x: unix seconds. Redraws when the data changes; fits its container's width. */
export function Chart({ title, x, series, height = 180 }: { title: string; x: number[]; series: Series[]; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const width = Math.max(240, el.clientWidth || 480);
    // Canvas takes no currentColor: the axes use the theme's text colour, read once.
    const ink = getComputedStyle(el).color || "#888";
    const plot = new uPlot(
      {
        title,
        width,
        height,
        // One point would otherwise stretch the time axis over years: give it a minute.
        scales: { x: x.length === 1 ? { time: true, auto: false, range: [x[0]! - 60, x[0]! + 5] } : { time: true } },
        series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2 }))],
        axes: [
          { stroke: ink, grid: { stroke: "rgba(128,128,128,.2)" } },
          { stroke: ink, grid: { stroke: "rgba(128,128,128,.2)" } },
        ],
      },
      [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: Math.max(240, el.clientWidth), height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [title, JSON.stringify(x), JSON.stringify(series), height]);
  return <div class="chart" ref={box} role="img" aria-label={`${title} chart`} />;
}
