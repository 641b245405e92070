// hymt-chat kiosk marker (hymt_chat/kiosk.py marker_props): invisible. public/kiosk.js sees it,
// switches the page to kiosk mode and, when it carries a text, adds "Read aloud" after it.
export default function HymtKiosk() {
  return (
    <span
      className="hymt-kiosk-marker"
      hidden
      data-idle={String(props.idle || 120)}
      data-lang={props.lang || ""}
      data-label={props.label || "Read aloud"}
      data-still={props.still || ""}
      data-welcome={props.welcome ? "true" : undefined}
      data-spoken={props.spoken ? "true" : undefined}
    >
      {props.text || ""}
    </span>
  );
}
