// Try: type `export function perimeter(` below and wait for a suggestion.

export interface Rectangle {
  width: number;
  height: number;
}

export function area(r: Rectangle): number {
  return r.width * r.height;
}

export function scale(r: Rectangle, factor: number): Rectangle {
  return { width: r.width * factor, height: r.height * factor };
}
